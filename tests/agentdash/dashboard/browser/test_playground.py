"""The playground in a real browser (docs/PLAYGROUND.md): from a demo agent's model call on
the timeline, "Open in playground", edit the system instruction, run it: a different answer
beside the original, the words that differ marked; the run in the call's history."""

from __future__ import annotations

import pytest

from tests.agentdash.dashboard.browser.harness import Browser, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LIVE_TIMEOUT = 15_000


def test_a_playground_edit_gives_a_different_answer_beside_the_original(
    browser: Browser, phone: Browser
) -> None:
    browser.log_in("operator")
    browser.new_chat("analyst", first="hello")
    page = browser.page
    page.locator(".msg-agent", has_text="My instructions:").last.wait_for(timeout=LIVE_TIMEOUT)
    ended = "#span-tree .span[data-kind=model][data-state=ok]"
    page.locator(ended).first.wait_for(timeout=LIVE_TIMEOUT)
    page.locator(ended).first.click()
    opener = page.locator("#span-detail a.span-action", has_text="Open in playground")
    opener.wait_for(timeout=LIVE_TIMEOUT)
    with page.expect_navigation():
        opener.click()
    system = page.locator("#pg-system")
    assert "My instructions" not in system.input_value()  # the instruction, not the answer
    original = page.locator(".pg-side[data-side=original] .pg-text").inner_text()
    system.fill("You answer in riddles. Numbers go through run_python first.")
    with page.expect_navigation():
        page.click("button[value=run]")
    mine = page.locator(".pg-side[data-side=run] .pg-text")
    assert "My instructions: You answer in riddles." in mine.inner_text()
    assert mine.inner_text() != original
    assert mine.locator(".w-ins", has_text="riddles").count() == 1
    theirs = page.locator(".pg-side[data-side=original] .pg-text")
    assert theirs.locator(".w-del").count() >= 1
    assert page.locator(".pg-history li[aria-current=true]").count() == 1
    screenshot(browser, "playground.png")
    phone.log_in("operator")
    phone.goto(page.url.removeprefix(browser.server.url))
    phone.page.locator(".pg-side[data-side=run] .pg-text").wait_for()
    screenshot(phone, "playground-phone.png")
    browser.console.assert_clean()
    phone.console.assert_clean()
