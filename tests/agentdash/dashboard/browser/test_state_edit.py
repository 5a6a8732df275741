"""An operator's state edit, when the session moves on before the edit's answer arrives.

The answer (``ack``) to ``state.edit`` and the session's changes reach the page by separate
paths: the edit's own event, and anything written after it, may come first. The page then
must not call its current version the edit's (it said "version 6" for an edit stored as 5,
while the header said v6), nor lay the edit's value over a newer one. The test holds one
tab's answers back (Playwright's websocket routing, the real server behind it) while a
second tab writes the same key.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.agentdash.dashboard.browser.harness import POLL_MS, Browser, Console

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LIVE_TIMEOUT = 30_000


def start_session(browser: Browser) -> str:
    """A capital-agent session with one answered question; its page's path."""
    page = browser.page
    browser.goto("/")
    with page.expect_navigation():
        page.locator("[data-agent='capital_agent']").first.click()
    page.fill("#composer-text", "What is the capital of France?")
    page.wait_for_selector("#composer-send:not([disabled])", timeout=LIVE_TIMEOUT)
    page.press("#composer-text", "Enter")
    page.locator(".msg-agent:not(.streaming) .msg-body.md", has_text="Paris").first.wait_for(
        timeout=LIVE_TIMEOUT
    )
    page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    page.locator("#span-tree .span[data-state='running']").first.wait_for(
        state="detached", timeout=LIVE_TIMEOUT
    )
    path = page.url.removeprefix(browser.server.url)
    assert re.fullmatch(r"/sessions/[^/]+/(\?.*)?", path), path
    return path.split("?")[0]


def header_version(browser: Browser) -> int:
    return int(browser.page.inner_text("#state-version").removeprefix("v"))


def edit_state(browser: Browser, key: str, value: str, reason: str) -> None:
    page = browser.page
    page.fill("#state-key", key)
    page.fill("#state-value", value)
    page.fill("#state-reason", reason)
    page.click("#state-form button[type=submit]")


def value_shown(browser: Browser, key: str) -> str:
    page = browser.page
    row = page.locator("#state-table tr", has=page.locator("th", has_text=key))
    return row.locator("td").inner_text()


def test_an_edit_answered_after_later_changes_names_its_own_version(browser: Browser) -> None:
    first = browser
    first.log_in("operator")
    path = start_session(first)
    second_page = first.page.context.new_page()  # a second tab of the same operator
    second = Browser(page=second_page, console=Console(), server=first.server)
    second_page.on("console", second.console.on_console)
    second_page.on("pageerror", lambda error: second.console.page_errors.append(str(error)))

    # The first operator's page, its answers to state.edit held back until released.
    held: list[str] = []
    routes: list[Any] = []

    def route(ws: Any) -> None:
        server = ws.connect_to_server()
        routes.append(ws)

        def to_page(message: str | bytes) -> None:
            data = json.loads(message) if isinstance(message, str) else {}
            if data.get("type") == "ack" and data.get("ref") == "state.edit":
                held.append(message)  # type: ignore[arg-type]
            else:
                ws.send(message)

        server.on_message(to_page)

    first.page.route_web_socket(re.compile(r".*/ws/sessions/.*"), route)
    first.goto(path)
    first.page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    assert routes, "the page's socket went around the route"
    before = header_version(first)

    second.goto(path)
    second.page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)

    # The first edit is stored as before+1; its answer is held.
    edit_state(first, "favourite_city", '"Paris"', "first operator")
    first.page.wait_for_function(
        "(v) => document.querySelector('#state-version').textContent === `v${v}`",
        arg=before + 1,
        timeout=LIVE_TIMEOUT,
        polling=POLL_MS,
    )  # the edit's own event came first
    second.page.wait_for_function(
        "(v) => document.querySelector('#state-version').textContent === `v${v}`",
        arg=before + 1,
        timeout=LIVE_TIMEOUT,
        polling=POLL_MS,
    )

    # The second operator writes the same key after it: before+2.
    edit_state(second, "favourite_city", '"Lyon"', "second operator")
    second.page.locator("#state-status[data-kind='ok']").wait_for(timeout=LIVE_TIMEOUT)
    first.page.wait_for_function(
        "(v) => document.querySelector('#state-version').textContent === `v${v}`",
        arg=before + 2,
        timeout=LIVE_TIMEOUT,
        polling=POLL_MS,
    )
    assert value_shown(first, "favourite_city") == '"Lyon"'

    # Now the first edit's answer arrives.
    assert len(held) == 1 and json.loads(held[0])["version"] == before + 1
    routes[0].send(held.pop())
    status = first.page.locator("#state-status[data-kind='ok']")
    status.wait_for(timeout=LIVE_TIMEOUT)
    message = status.inner_text()
    assert f"as v{before + 1}" in message, message
    assert f"now v{before + 2}" in message, message
    assert header_version(first) == before + 2
    assert value_shown(first, "favourite_city") == '"Lyon"'  # the newer value stays

    # An edit answered in order says just its version, the header's.
    edit_state(second, "favourite_colour", '"blue"', "second operator")
    # Its answer, not the "Saving…" that names the key too.
    second.page.locator("#state-status[data-kind='ok']", has_text="favourite_colour").wait_for(
        timeout=LIVE_TIMEOUT
    )
    assert second.page.inner_text("#state-status") == (f"Saved favourite_colour as v{before + 3}.")
    assert header_version(second) == before + 3
    first.console.assert_clean()
    second.console.assert_clean()
