"""The Compare page in a real browser: two chats with the capital agent on the offline model,
compared through the session page's "Compare…" link and the picker — on a desktop and on a
390×844 phone, where nothing may scroll sideways; no console error, no CSP violation.

``AGENTDASH_SCREENSHOTS=<dir>`` saves compare-desktop.png and compare-phone.png there.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.agentdash.dashboard.browser.harness import Browser, screenshot
from tests.agentdash.dashboard.browser.test_demos_offline import answer_to
from tests.agentdash.dashboard.browser.test_mobile_layout import assert_fits

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def chat(browser: Browser, *questions: tuple[str, str]) -> str:
    """A new chat with the capital agent asking each ``(question, expected word)``; its
    session id."""
    browser.new_chat("capital_agent")
    for question, expected in questions:
        answer_to(browser, question, expected)
    found = re.search(r"/sessions/([^/]+)/$", browser.page.url)
    assert found, browser.page.url
    return found.group(1)


@pytest.fixture(scope="module")
def sessions() -> dict[str, str]:
    return {}


def test_two_chats_compared_through_the_picker(browser: Browser, sessions: dict[str, Any]) -> None:
    browser.log_in("alice")
    a = chat(browser, ("What is the capital of France?", "Paris"), ("And Japan?", "Tokyo"))
    b = chat(browser, ("What is the capital of France?", "Paris"), ("And Italy?", "Rome"))
    sessions.update(a=a, b=b)
    page = browser.page

    with page.expect_navigation():
        page.click("a.compare-link")  # on b's page
    page.select_option("#pick-b", a)
    with page.expect_navigation(url=re.compile(r"/compare/\?")):
        page.click(".compare-pick form button[type=submit]")

    page.wait_for_selector("#compare-summary")
    assert page.locator(".cmp-turn").count() == 2
    assert page.locator(".cmp-turn.status-same").count() == 1
    assert page.locator(".cmp-turn.status-changed").count() == 1
    assert page.locator(".words .w-ins").count() >= 1 and page.locator(".words .w-del").count() >= 1
    assert page.locator(".cmp-totals tbody tr").count() == 6
    page.set_viewport_size({"width": 1440, "height": 900})
    page.locator(".cmp-turn.status-changed").scroll_into_view_if_needed()
    screenshot(browser, "compare-desktop.png")
    page.locator(".cmp-turn.status-changed details.cmp-spans summary").click()
    screenshot(browser, "compare-desktop-spans.png")
    page.evaluate("window.scrollTo(0, 0)")
    screenshot(browser, "compare-desktop-top.png")
    page.emulate_media(color_scheme="dark")  # no theme chosen: the system's
    page.locator(".cmp-turn.status-changed").scroll_into_view_if_needed()
    screenshot(browser, "compare-desktop-dark.png")
    browser.console.assert_clean(allow_websocket_failures=True)


def test_the_compare_page_fits_a_phone(phone: Browser, sessions: dict[str, Any]) -> None:
    if not sessions:
        pytest.skip("needs the chats of the test before")
    phone.log_in("alice")
    phone.goto(f"/compare/?a={sessions['b']}&b={sessions['a']}")
    page = phone.page
    page.wait_for_selector("#compare-summary")
    assert_fits(phone, "the compare page")
    screenshot(phone, "compare-phone-top.png")
    page.locator(".cmp-turn.status-changed").scroll_into_view_if_needed()
    screenshot(phone, "compare-phone.png")
    page.locator(".cmp-turn.status-changed details.cmp-spans summary").click()
    assert_fits(phone, "the compare page with a span tree open")
    phone.goto(f"/compare/?a={sessions['b']}")
    assert_fits(phone, "the picker")
    phone.console.assert_clean()
