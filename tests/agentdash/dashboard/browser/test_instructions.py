"""An instruction edited mid-session (docs/INSTRUCTIONS.md), in a real browser: an operator
chats with the analyst, edits its instruction (preview with the diff, save), and the next
answer follows it — its model span saying which version it was given —; a rollback to the
code's text and the answer after it is as before."""

from __future__ import annotations

import pytest

from tests.agentdash.dashboard.browser.harness import Browser, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LIVE_TIMEOUT = 15_000
CODE_FIRST = "My instructions: You are a careful data analyst."
EDITED = "You answer in riddles. Compute numbers with run_python, then riddle the result."


def send(browser: Browser, text: str, expect: str) -> None:
    """Send ``text``; wait for the answer to it, which says ``expect``."""
    page = browser.page
    page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    answers = page.locator(".msg-agent:not(.streaming)")
    before = answers.count()
    page.fill("#composer-text", text)
    page.press("#composer-text", "Enter")
    answers.nth(before).wait_for(timeout=LIVE_TIMEOUT)
    assert expect in answers.nth(before).inner_text()


def model_span_instruction(browser: Browser, turn: int) -> str:
    """The instruction version of the model call of turn ``turn`` (1, 2, …: the analyst makes
    one to echo a greeting), from its span details."""
    page = browser.page
    ended = "#span-tree .span[data-kind=model][data-state=ok]"
    page.wait_for_function(
        "([sel, n]) => document.querySelectorAll(sel).length >= n", arg=[ended, turn],
        timeout=LIVE_TIMEOUT,
    )  # fmt: skip
    page.locator(ended).nth(turn - 1).click()
    fact = page.locator("#span-detail .fact[data-fact=instruction] dd")
    fact.wait_for(timeout=LIVE_TIMEOUT)
    return fact.inner_text()


def test_an_instruction_edited_mid_session_changes_the_next_answer_and_rolls_back(
    browser: Browser, phone: Browser
) -> None:
    browser.log_in("operator")
    session = browser.new_chat("analyst", first="hello")
    page = browser.page
    page.locator(".msg-agent", has_text=CODE_FIRST).last.wait_for(timeout=LIVE_TIMEOUT)
    assert model_span_instruction(browser, 1) in ("code", "v1", "v2", "v3", "v4")

    browser.goto("/instructions/analyst/")
    page.fill("#id_text", EDITED)
    page.fill("#id_reason", "<b>shorter</b>, for the demo")
    with page.expect_navigation():
        page.click("button[value=preview]")
    preview = page.locator(".card.preview")
    assert preview.locator(".w-ins", has_text="riddles").count() >= 1
    assert preview.locator(".w-del", has_text="careful").count() >= 1
    with page.expect_navigation():
        page.click("button[value=save]")
    saved = page.locator(".notice", has_text="Saved as version").inner_text()
    version = saved.split("Saved as version ")[1].split(":")[0]
    assert page.locator(".instruction-history li").first.get_attribute("data-version") == version
    assert "<b>shorter</b>, for the demo" in page.locator(".instruction-history").inner_text()
    screenshot(browser, "instruction-edit.png")
    phone.log_in("operator")
    phone.goto("/instructions/analyst/")
    screenshot(phone, "instruction-edit-phone.png")

    browser.goto(session)  # the same session: its next answer follows the new version
    send(browser, "hello again", "My instructions: You answer in riddles.")
    assert model_span_instruction(browser, 2) == f"v{version}"

    browser.goto("/instructions/analyst/")
    code = page.locator(".instruction-history li[data-version='0']")
    with page.expect_navigation():
        code.locator("button", has_text="Roll back to this").click()
    assert "Rolled back to the code's text" in page.locator(".notice").inner_text()
    browser.goto(session)
    send(browser, "and now?", CODE_FIRST)
    assert model_span_instruction(browser, 3) == f"v{int(version) + 1}"
    browser.console.assert_clean()
    phone.console.assert_clean()
