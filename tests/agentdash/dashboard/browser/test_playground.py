"""The playground in a real browser (docs/PLAYGROUND.md): from a demo agent's model call on
the timeline, "Open in playground", edit the system instruction, run it: the answer streams
in as it comes, then shows beside the original, the words that differ marked; the run in the
call's history."""

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
    # The answer streams in as text before the page opens the run: what the streaming box
    # held is kept across that navigation to be read after it.
    page.evaluate(
        """() => new MutationObserver(() => {
            const box = document.querySelector('.pg-streaming');
            if (box) sessionStorage.setItem('streamed', box.textContent);
        }).observe(document.body, {subtree: true, childList: true, characterData: true})"""
    )
    ndjson = lambda r: r.headers.get("content-type", "").startswith("application/x-ndjson")  # noqa: E731
    with page.expect_response(ndjson), page.expect_navigation():
        page.click("button[value=run]")
    streamed = page.evaluate("sessionStorage.getItem('streamed')") or ""
    assert "My instructions: You answer in riddles." in streamed
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
