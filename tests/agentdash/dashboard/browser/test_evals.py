"""Keep it as a test, in a real browser against daphne (see conftest.py): an operator chats
with the capital agent, keeps the session as an eval case from its page, runs the set from
the set's page (executed in the server, through its run pipeline) and reads the results,
which link the rerun's timeline; the eval pages fit a phone. No console error, no CSP
violation."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from tests.agentdash.dashboard.browser.harness import Browser, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TIMEOUT = 60.0  # s
DOCS_EXAMPLE = (
    Path(__file__).parents[3] / "runtime" / "evaluation" / "data" / "home_automation.evalset.json"
)


def _wait_run_ended(browser: Browser, session_path: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        found: Any = browser.page.request.get(f"{browser.server.url}{session_path}snapshot/")
        runs = found.json()["runs"]
        if runs and all(r["status"] in ("succeeded", "failed") for r in runs):
            return
        time.sleep(0.2)
    raise AssertionError("the chat's run did not end")


def test_keep_a_session_as_a_test_and_run_it(browser: Browser) -> None:
    browser.log_in("operator")
    session_path = browser.new_chat(first="What is the capital of France?")
    _wait_run_ended(browser, session_path)

    page = browser.page
    page.click("#eval-keep > summary")
    page.fill("#eval-keep-set", "browser-capitals")
    page.fill("#eval-keep-id", "france")
    with page.expect_navigation(url=re.compile(r"/evals/\d+/$")):
        page.click(".eval-keep-form button[type=submit]")
    assert "Added this session as a case of browser-capitals." in page.inner_text("main")
    assert page.inner_text("table.eval-cases").count("france") == 1
    screenshot(browser, "eval-set-desktop.png")

    page.select_option("#id_agent_name", "capital_agent")
    with page.expect_navigation(url=re.compile(r"/evals/runs/\d+/$")):
        page.click("form.eval-form button[type=submit]")
    page.wait_for_selector(
        ".crumbs .eval-status[data-status='passed']", timeout=TIMEOUT * 1000
    )  # the page reloads itself until the run is over
    row = page.inner_text("table.eval-results tbody tr")
    assert "france" in row and "passed" in row and "1.00" in row
    screenshot(browser, "eval-run-desktop.png")
    with page.expect_navigation(url=re.compile(r"/sessions/[^/]+/$")):
        page.click("table.eval-results a")
    assert page.url.removeprefix(browser.server.url) != session_path  # the rerun's own session
    browser.console.assert_clean(allow_websocket_failures=True)


def test_the_eval_pages_fit_a_phone(phone: Browser) -> None:
    phone.log_in("operator")
    phone.goto("/evals/")
    phone.page.set_input_files("#id_file", str(DOCS_EXAMPLE))
    phone.page.check("#id_replace")
    with phone.page.expect_navigation(url=re.compile(r"/evals/\d+/$")):
        phone.page.click("form.eval-form button[type=submit]")
    set_path = phone.page.url.removeprefix(phone.server.url)
    assert "eval_case_id" in phone.page.inner_text("table.eval-cases")
    for path in ("/evals/", set_path):
        phone.goto(path)
        width = phone.page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"{path} is {width}px wide on a 390px phone"
    screenshot(phone, "eval-set-phone.png")
    phone.console.assert_clean()
