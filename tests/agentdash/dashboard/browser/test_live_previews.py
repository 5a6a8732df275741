"""Spans on the page before they are stored (``spans`` messages), in a real browser: with
every flush a second slow, a run's spans are on the timeline while none of them has come
as a stored change; then the stored changes take their place, and the page is as it would
be without previews."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.agentdash.dashboard.browser.harness import (
    Browser,
    LiveServer,
    screenshot,
    server_running,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LIVE_TIMEOUT = 30_000  # ms: a run takes a few slow flushes here
FLUSH_DELAY_S = 1.0


@pytest.fixture(scope="module")
def agentdash_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """This module's own daphne, every live flush a second slower."""
    with server_running(
        tmp_path_factory.mktemp("slow-flush-server"),
        env_extra={"AGENTDASH_TEST_FLUSH_DELAY_S": str(FLUSH_DELAY_S)},
        launcher="tests.agentdash.dashboard.browser.slow_flush",
    ) as server:
        yield server


def shown(browser: Browser) -> int:
    """The spans the timeline counts."""
    text = browser.page.locator("#span-count").inner_text()
    found = re.match(r"([\d,]+) spans?", text)
    return int(found.group(1).replace(",", "")) if found else 0


def test_a_runs_spans_show_before_they_are_stored(browser: Browser) -> None:
    page = browser.page
    browser.log_in("alice")
    browser.new_chat("capital_agent", first="What is the capital of France?")
    page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    page.locator(".msg-agent .msg-body.md", has_text="Paris").first.wait_for(timeout=LIVE_TIMEOUT)
    # The run's outcome comes after its spans' last changes: the first run is stored whole.
    page.locator("#run-status", has_text="succeeded").wait_for(timeout=LIVE_TIMEOUT)
    frames: list[dict[str, Any]] = []
    page.on(
        "websocket",
        lambda ws: ws.on("framereceived", lambda frame: frames.append(json.loads(frame))),
    )
    page.reload()  # its socket, watched from the start
    page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    page.wait_for_function(
        "() => /^[1-9][\\d,]* spans?$/.test(document.querySelector('#span-count').textContent)",
        timeout=LIVE_TIMEOUT,
    )  # the first run's spans, loaded
    before = shown(browser)

    frames.clear()  # what comes from here on is the next run's
    page.fill("#composer-text", "And the capital of Japan?")
    page.press("#composer-text", "Enter")
    page.wait_for_function(  # the new run's first spans, on the page
        """before => {
            const text = document.querySelector('#span-count').textContent;
            const found = /^([\\d,]+) spans?$/.exec(text);
            return found !== null && Number(found[1].replace(/,/g, '')) > before;
        }""",
        arg=before,
        timeout=LIVE_TIMEOUT,
    )
    stored_spans = [
        item
        for frame in frames
        if frame.get("type") == "changes" and not frame.get("replay")
        for item in frame["items"]
        if item["kind"] == "span"
    ]
    assert stored_spans == []  # what shows came unstored
    assert any(frame.get("type") == "spans" for frame in frames)
    screenshot(browser, "session-previewed.png")

    # Then the stored changes: the run ends, every span ended, as many as were previewed.
    # Previews may show every span ended before any is stored: the run's end, which comes
    # after its spans' stored changes, is what says they are all in.
    page.locator("#run-status[data-status='running']").wait_for(timeout=LIVE_TIMEOUT)
    page.locator(".msg-agent .msg-body.md", has_text="Tokyo").first.wait_for(timeout=LIVE_TIMEOUT)
    page.locator("#run-status[data-status='succeeded']").wait_for(timeout=LIVE_TIMEOUT)
    page.locator("#span-tree .span[data-state='running']").first.wait_for(
        state="detached", timeout=LIVE_TIMEOUT
    )
    previewed = {
        (data["trace_id"], data["span_id"])
        for frame in frames
        if frame.get("type") == "spans"
        for data in frame["items"]
    }
    stored = {
        (item["data"]["trace_id"], item["data"]["span_id"])
        for frame in frames
        if frame.get("type") == "changes"
        for item in frame["items"]
        if item["kind"] == "span" and item["data"]
    }
    assert previewed <= stored  # each previewed span came stored too
    assert shown(browser) == before + len(stored)
    screenshot(browser, "session-previewed-then-stored.png")
    browser.console.assert_clean()
