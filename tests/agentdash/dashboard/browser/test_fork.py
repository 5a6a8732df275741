"""Fork here, in a real browser against the real server: an operator forks a session at its
first answer, with the state editor and the switches the form starts from, and replays; the
fork's page says where it came from and gets the original's next answer again; the parent's
page lists the fork. On a 390×844 phone the button is there without hovering and the form
fits the screen.

``AGENTDASH_SCREENSHOTS=<dir>`` saves screenshots there.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.agentdash.dashboard.browser.harness import POLL_MS, Browser, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LIVE_TIMEOUT = 30_000
ANSWER = ".msg-agent:not(.streaming) .msg-body.md"


def two_questions(browser: Browser) -> str:
    """A capital-agent session: France, then Japan, each answered; its page's path."""
    path = browser.new_chat(first="What is the capital of France?")
    page = browser.page
    page.locator(ANSWER, has_text="Paris").first.wait_for(timeout=LIVE_TIMEOUT)
    page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    page.fill("#composer-text", "What is the capital of Japan?")
    page.press("#composer-text", "Enter")
    page.locator(ANSWER, has_text="Tokyo").first.wait_for(timeout=LIVE_TIMEOUT)
    page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    return path


def open_fork_form(browser: Browser, answer: str) -> None:
    page = browser.page
    part = page.locator(".msg-agent .msg-part", has=page.locator(".msg-body", has_text=answer))
    part.first.hover()
    part.first.locator(".fork-here").click()
    # Loaded: the state and switches as of the event are in (the seq shows before that).
    page.locator("#fork-dialog[open][data-loaded]").wait_for()
    page.wait_for_function(
        "() => /^\\d+$/.test(document.querySelector('#fork-seq').textContent)", polling=POLL_MS
    )


def test_an_operator_forks_at_an_answer_and_replays(browser: Browser) -> None:
    browser.log_in("operator")
    parent = two_questions(browser)
    page = browser.page
    open_fork_form(browser, "Paris")
    state = json.loads(page.input_value("#fork-state"))
    assert isinstance(state, dict)
    assert page.locator("#fork-switch-list input[type=checkbox]").count() > 0
    screenshot(browser, "fork-form.png")
    with page.expect_navigation(url=re.compile(r"/sessions/[^/]+/$")):
        page.click("#fork-form button[value=replay]")
    assert page.url.removeprefix(browser.server.url) != parent
    assert "Forked from" in page.inner_text(".fork-of")
    # The replay asks Japan again: the fork gets the original's answer.
    page.locator(ANSWER, has_text="Tokyo").first.wait_for(timeout=LIVE_TIMEOUT)
    screenshot(browser, "fork-replayed.png")
    fork = page.url.removeprefix(browser.server.url)
    browser.goto(parent)
    assert page.locator(f".fork-list a[href='{fork}']").count() == 1
    browser.console.assert_clean()


def test_on_a_phone_the_fork_form_fits(phone: Browser) -> None:
    phone.log_in("alice")
    two_questions(phone)
    page = phone.page
    button = page.locator(".msg-agent .msg-part .fork-here").first
    assert float(button.evaluate("(b) => getComputedStyle(b).opacity")) == 1
    open_fork_form(phone, "Paris")
    assert page.locator("#fork-state").count() == 0  # a user forks as it was
    box = page.locator("#fork-dialog").bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    screenshot(phone, "fork-form-phone.png")
    with page.expect_navigation(url=re.compile(r"/sessions/[^/]+/$")):
        page.click("#fork-form button[value=open]")
    assert "at event" in page.inner_text(".fork-of")
    phone.console.assert_clean()
