"""Browser tests: a real Chromium (Debian's, driven by Playwright) against the real server
(see harness.py).

Chromium and the ``playwright`` package come from ``scripts/chromium.sh`` (never
``playwright install``). Where either is missing, a developer's run SKIPS these tests with a
message saying so; in CI (``CI`` set, not 0/false) it FAILS them instead. A failed test's
report ends with the server's log.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agentdash.dashboard.browser.harness import (
    CHROMIUM,
    CHROMIUM_ARGS,
    REPORT_CSP,
    Browser,
    Console,
    LiveServer,
    ServerError,
    server_start,
    server_stop,
)
from tests.agentdash.live_harness import in_ci

_server_for_reports: list[LiveServer] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.failed and _server_for_reports and item.get_closest_marker("browser"):
        report.sections.append(("daphne log (tail)", _server_for_reports[0].log_tail()))


def _unavailable(reason: str) -> None:
    """Fail in CI, skip (saying what to run) on a developer's machine."""
    if in_ci():
        pytest.fail(f"{reason} — CI needs the browser tests (scripts/chromium.sh installs it)")
    pytest.skip(f"browser tests skipped: {reason}; run scripts/chromium.sh (in CI this fails)")


@pytest.fixture(scope="session")
def agentdash_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """daphne on 127.0.0.1:<free port>, on a fresh migrated and seeded SQLite file."""
    try:
        server = server_start(tmp_path_factory.mktemp("live-server"))
    except ServerError as exc:
        pytest.fail(str(exc))
    _server_for_reports.append(server)
    try:
        yield server
    finally:
        _server_for_reports.clear()
        server_stop(server)


@pytest.fixture(scope="module")
def playwright_driver() -> Iterator[Any]:
    """Playwright's sync driver, for one test module at a time: it runs an event loop in this
    thread while it is started, which async tests elsewhere in the run must not find."""
    if not Path(CHROMIUM).is_file():
        _unavailable(f"{CHROMIUM} is missing")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the Python package 'playwright' is not installed")
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def chromium(playwright_driver: Any) -> Iterator[Any]:
    """One Chromium for a module's tests: each test gets a context of its own in it (cookies,
    storage, cache and permissions apart, as a fresh profile has them), which costs
    milliseconds where starting a browser costs a second or two."""
    browser = playwright_driver.chromium.launch(
        executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
    )
    try:
        yield browser
    finally:
        with contextlib.suppress(Exception):
            browser.close()


@pytest.fixture
def browser(chromium: Any, agentdash_server: LiveServer) -> Iterator[Browser]:
    """A fresh browser context with one page, watched: console errors, uncaught exceptions,
    CSP violations and failed static files are collected."""
    with _watched(chromium, agentdash_server) as found:
        yield found


PHONE = {  # a 390×844 phone (as an iPhone 12–14): touch, mobile viewport rules, 3x pixels
    "viewport": {"width": 390, "height": 844},
    "device_scale_factor": 3,
    "is_mobile": True,
    "has_touch": True,
}


@pytest.fixture
def phone(chromium: Any, agentdash_server: LiveServer) -> Iterator[Browser]:
    """:func:`browser`, as a 390×844 phone."""
    with _watched(chromium, agentdash_server, **PHONE) as found:
        yield found


ABROAD = {  # a reader far from UTC, in a locale with its own digits
    "timezone_id": "Asia/Kolkata",  # UTC+05:30 all year
    "locale": "ar-EG",
}


@pytest.fixture
def abroad(chromium: Any, agentdash_server: LiveServer) -> Iterator[Browser]:
    """:func:`browser`, in Kolkata's time zone and an Arabic (Egypt) locale."""
    with _watched(chromium, agentdash_server, **ABROAD) as found:
        yield found


@contextlib.contextmanager
def _watched(chromium: Any, server: LiveServer, **options: Any) -> Iterator[Browser]:
    options.setdefault("viewport", {"width": 1440, "height": 900})
    context = chromium.new_context(**options)
    context.add_init_script(REPORT_CSP)
    context.set_default_timeout(15_000)
    page = context.new_page()
    console = Console()
    page.on("console", console.on_console)
    page.on("pageerror", lambda error: console.page_errors.append(str(error)))

    def on_response(response: Any) -> None:
        if response.status >= 400 and "/static/" in response.url:
            console.failed_requests.append(f"{response.status} {response.url}")

    page.on("response", on_response)
    try:
        yield Browser(page=page, console=console, server=server)
    finally:
        with contextlib.suppress(Exception):
            context.close()
