"""The chat's thumbs in a real browser (docs/SCORES.md): an end user's thumbs down on an answer,
with a comment, shows on an operator's open sessions list without a reload, and is shown
pressed when the chat is opened again."""

from __future__ import annotations

import pytest

from tests.agentdash.dashboard.browser.harness import Browser, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LIVE_TIMEOUT = 15_000


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
