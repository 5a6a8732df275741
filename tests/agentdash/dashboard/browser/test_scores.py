"""Scores in a real browser (docs/SCORES.md): the chat's thumbs — an end user's thumbs down on
an answer, with a comment, shows on an operator's open sessions list without a reload, and is
shown pressed when the chat is opened again —; and scoring on the session page, by keys and
by clicks: a span, its run and a number, kept over a reload, taken back."""

from __future__ import annotations

import json

import pytest

from tests.agentdash.dashboard.browser.harness import Browser, LiveServer, screenshot
from tests.agentdash.live_harness import manage

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LIVE_TIMEOUT = 15_000

DEFINITIONS = """
from agentdash.scores.models import ScoreDefinition
ScoreDefinition.objects.get_or_create(name="failure", defaults={"kind": "category",
    "categories": ["wrong tool", "hallucination", "<b>other</b>"]})
ScoreDefinition.objects.get_or_create(name="helpful", defaults={"kind": "boolean"})
ScoreDefinition.objects.get_or_create(name="quality", defaults={"kind": "number",
    "minimum": 1, "maximum": 5})
"""


def test_a_thumbs_down_reaches_the_operators_list_live(browser: Browser, phone: Browser) -> None:
    browser.log_in("alice")
    path = browser.new_chat("capital_agent", first="What is the capital of France?")
    session_id = path.strip("/").split("/")[-1]
    chat = browser.page
    answer = chat.locator(".msg-agent", has_text="Paris").last
    answer.locator(".msg-feedback button[data-feedback=down]").wait_for(timeout=LIVE_TIMEOUT)

    phone.log_in("operator")  # the sessions list, kept current by its socket
    operators = phone.page
    operators.wait_for_selector("#list-live[data-state='live']", timeout=LIVE_TIMEOUT)
    row = operators.locator(f"tr.session-row[data-session-id='{session_id}']")
    assert row.locator(".feedback-down").inner_text() == "▼ 0"

    answer.locator(".msg-feedback button[data-feedback=down]").click()
    row.locator(".feedback-down.has-down", has_text="▼ 1").wait_for(timeout=LIVE_TIMEOUT)
    pressed = answer.locator(".msg-feedback button[data-feedback=down][aria-pressed=true]")
    pressed.wait_for()
    answer.locator(".feedback-comment input").fill("It said Lyon")
    answer.locator(".feedback-comment button").click()
    answer.locator(".feedback-note", has_text="Thank you.").wait_for()
    screenshot(browser, "chat-feedback.png")
    screenshot(phone, "sessions-feedback-phone.png")

    chat.reload()  # what she said is shown again
    again = chat.locator(".msg-agent", has_text="Paris").last
    again.locator(".msg-feedback button[data-feedback=down][aria-pressed=true]").wait_for()
    assert (
        again.locator(".msg-feedback button[data-feedback=up]").get_attribute("aria-pressed")
        == "false"
    )
    browser.console.assert_clean()
    phone.console.assert_clean()


def test_scoring_on_the_session_page_by_keys_and_clicks(
    browser: Browser, phone: Browser, agentdash_server: LiveServer
) -> None:
    manage(agentdash_server.env, "shell", "-c", DEFINITIONS)
    browser.log_in("alice")
    path = browser.new_chat("capital_agent", first="What is the capital of France?")
    page = browser.page
    page.locator(".msg-agent", has_text="Paris").last.wait_for(timeout=LIVE_TIMEOUT)
    page.wait_for_selector("#span-tree[data-complete='true']", timeout=LIVE_TIMEOUT)
    page.evaluate("document.activeElement.blur()")

    # Keys: `s` opens the first span's scoring, the keyboard on the first score's first
    # choice (which score is first depends on the definitions kept: other tests add some);
    # on the failure row, `2` is "hallucination".
    page.keyboard.press("s")
    panel = page.locator("#span-detail .score-panel")
    failure = panel.locator(".score-row[data-score-name=failure]")
    failure.locator("button.score-choice").first.wait_for(timeout=LIVE_TIMEOUT)
    focused = "document.activeElement.matches('.score-row:first-of-type button[data-choice]')"
    page.wait_for_function(focused)
    failure.locator("button.score-choice").first.focus()
    page.keyboard.press("2")
    failure.locator("button[data-choice=hallucination][aria-pressed=true]").wait_for()
    span_id = page.locator("#span-detail").get_attribute("data-span-id")
    row = page.locator(f"#span-tree .span[data-span-id='{span_id}'] .score-mark")
    assert row.inner_text() == "failure hallucination"

    # Clicks: its run is not helpful (a red mark on the run's first span); a number, by Enter.
    panel.locator(".score-target select").select_option(label="its run")
    panel.locator(".score-row[data-score-name=helpful] button[data-choice=no]").click()
    panel.locator(".score-item[data-score-name=helpful] .score-value", has_text="no").wait_for()
    page.locator(f"#span-tree .span[data-span-id='{span_id}'] .score-mark.score-bad",
                 has_text="2 scores").wait_for()  # fmt: skip
    quality = panel.locator(".score-row[data-score-name=quality] input")
    quality.fill("9")
    quality.press("Enter")
    panel.locator(".score-status.error", has_text="quality is from 1 to 5").wait_for()
    quality.fill("4")
    quality.press("Enter")
    panel.locator(".score-status", has_text="Saved: quality 4").wait_for()
    # A category named with markup is a category, shown as text.
    assert failure.locator("button.score-choice").nth(2).inner_text() == "<b>other</b>"
    screenshot(browser, "session-scores.png")

    page.reload()  # kept: the marks and the list come back
    page.wait_for_selector("#span-tree[data-complete='true']", timeout=LIVE_TIMEOUT)
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("g")
    items = panel.locator(".score-item")
    items.nth(2).wait_for(timeout=LIVE_TIMEOUT)
    assert {i.get_attribute("data-score-name") for i in items.all()} == {
        "failure",
        "helpful",
        "quality",
    }
    scores = json.loads(page.evaluate(
        "(url) => fetch(url).then((r) => r.text())", f"{path}scores/"
    ))["scores"]  # fmt: skip
    made = {(s["name"], s["target"], str(s["value"]), s["source"]) for s in scores}
    assert made == {
        ("failure", "span", "hallucination", "person"),
        ("helpful", "run", "no", "person"),
        ("quality", "run", "4.0", "person"),
    }

    phone.log_in("alice")  # the same scores on a phone: the first span's details
    phone.goto(path)
    phone.page.wait_for_selector("#span-tree[data-complete='true']", state="attached",
                                 timeout=LIVE_TIMEOUT)  # fmt: skip
    phone.page.evaluate("document.activeElement.blur()")
    phone.page.keyboard.press("s")
    phone.page.locator("#span-detail .score-item").nth(2).wait_for(timeout=LIVE_TIMEOUT)
    phone.page.locator("#span-detail .score-panel").scroll_into_view_if_needed()
    screenshot(phone, "session-scores-phone.png")

    # Taken back: gone from the list and the row's mark.
    panel.locator(".score-item[data-score-name=failure] button[data-remove]").click()
    panel.locator(".score-item[data-score-name=failure]").wait_for(state="detached")
    page.locator(f"#span-tree .span[data-span-id='{span_id}'] .score-mark",
                 has_text="2 scores").wait_for()  # fmt: skip
    browser.console.assert_clean()
    phone.console.assert_clean()
