"""The Export menu of the session page in a real browser: the session as JSON, the trace of
the span whose details are open and every trace as OTLP JSON — downloaded as a person would
and read back (OTLP through protobuf's parser, as a receiver reads it).

``AGENTDASH_SCREENSHOTS=<dir>`` saves the open menu at 1440×900 and on a 390×844 phone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.agentdash.dashboard.browser.harness import (
    POLL_MS,
    Browser,
    LiveServer,
    screenshot,
    session_generate,
)
from tests.agentdash.otlp_receiver import otlp_parse, strict_json

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LOAD_TIMEOUT = 60_000  # ms: only a hang fails here
MENU = "#export-menu"
TRACE_LINK = f"{MENU} a[data-export='trace']:not([data-query])"
TRACE_PROTOBUF = f"{MENU} a[data-export='trace'][data-query]"


@pytest.fixture(scope="module")
def session(agentdash_server: LiveServer) -> dict[str, Any]:
    """Two runs (two traces) of 60 spans, Alice's."""
    return session_generate(
        agentdash_server, "spans", "--count", "120", "--per-run", "60",
        "--failed", "0", "--cancelled", "0", "--owner", "alice",
    )  # fmt: skip


def open_session(browser: Browser, session: dict[str, Any]) -> None:
    browser.log_in("alice")
    browser.goto(session["path"])
    browser.page.wait_for_function(
        """(total) => {
          const tree = document.querySelector("#span-tree");
          return tree && tree.dataset.complete === "true" && Number(tree.dataset.spans) === total;
        }""",
        arg=session["spans"],
        timeout=LOAD_TIMEOUT,
        polling=POLL_MS,
    )


def protobuf_spans(data: bytes) -> list[Any]:
    request = ExportTraceServiceRequest()
    request.ParseFromString(data)
    return [s for r in request.resource_spans for scope in r.scope_spans for s in scope.spans]


def download(browser: Browser, link: str) -> tuple[str, bytes]:
    """Open the menu, click ``link``; the file's suggested name and its bytes."""
    page = browser.page
    if not page.locator(MENU).evaluate("(menu) => menu.open"):
        page.click(f"{MENU} > summary")
    with page.expect_download() as started:
        page.click(link)
    found = started.value
    assert found.failure() is None
    return found.suggested_filename, Path(found.path()).read_bytes()


def test_the_session_and_its_traces_download_from_the_page(
    browser: Browser, session: dict[str, Any]
) -> None:
    open_session(browser, session)
    page = browser.page
    session_id = session["session_id"]

    name, data = download(browser, f"{MENU} a[data-export='session']")
    assert name == f"agentdash-session-{session_id}.json"
    document = strict_json(data)
    assert document["session"]["id"] == session_id
    assert len(document["spans"]) == session["spans"]
    assert [run["status"] for run in document["runs"]] == ["succeeded", "succeeded"]
    assert not page.locator(MENU).evaluate("(menu) => menu.open")  # a choice closes it

    # No span open: no trace to export yet.
    page.click(f"{MENU} > summary")
    assert page.get_attribute(TRACE_LINK, "aria-disabled") == "true"
    assert page.get_attribute(TRACE_LINK, "href") is None
    page.keyboard.press("Escape")
    assert not page.locator(MENU).evaluate("(menu) => menu.open")

    # Open the last span of the tree (the second run's): its trace is the one exported.
    page.locator("#span-tree [role='treeitem']").first.click()
    page.keyboard.press("End")
    page.keyboard.press("Enter")
    page.locator("#span-detail:not([hidden])").wait_for()
    trace_id = page.locator("#span-detail").get_attribute("data-trace-id")
    assert trace_id == session["last_span"]["trace_id"]
    assert trace_id != session["first_span"]["trace_id"]
    name, data = download(browser, TRACE_LINK)
    assert name == f"agentdash-trace-{trace_id}.otlp.json"
    spans = otlp_parse(data).resource_spans[0].scope_spans[0].spans
    assert len(spans) == 60
    assert {span.trace_id.hex() for span in spans} == {trace_id}

    name, data = download(browser, f"{MENU} a[data-export='otlp']")
    assert name == f"agentdash-session-{session_id}.otlp.json"
    spans = otlp_parse(data).resource_spans[0].scope_spans[0].spans
    assert len(spans) == session["spans"]
    assert len({span.trace_id for span in spans}) == 2

    # The same as OTLP protobuf (what Phoenix takes), for the trace and for the session.
    name, data = download(browser, TRACE_PROTOBUF)
    assert name == f"agentdash-trace-{trace_id}.otlp.pb"
    assert {s.trace_id.hex() for s in protobuf_spans(data)} == {trace_id}
    assert len(protobuf_spans(data)) == 60
    name, data = download(browser, f"{MENU} a[data-export='otlp-protobuf']")
    assert name == f"agentdash-session-{session_id}.otlp.pb"
    assert len(protobuf_spans(data)) == session["spans"]

    # Closing the details takes the trace away again.
    page.locator("#span-detail button", has_text="Close").first.click()
    page.click(f"{MENU} > summary")
    assert page.get_attribute(TRACE_LINK, "aria-disabled") == "true"
    browser.console.assert_clean()


def test_the_menu_fits_the_screen_with_a_span_open(
    browser: Browser, session: dict[str, Any]
) -> None:
    open_session(browser, session)
    page = browser.page
    page.locator("#span-tree [role='treeitem'][aria-level='1']").first.click()
    page.locator("#span-detail:not([hidden])").wait_for()
    page.click(f"{MENU} > summary")
    box = page.locator(f"{MENU} .export-list").bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 1440
    assert page.locator(TRACE_LINK).get_attribute("href")
    screenshot(browser, "export-menu.png")
    browser.console.assert_clean()


def test_on_a_phone_the_menu_is_in_reach(phone: Browser, session: dict[str, Any]) -> None:
    open_session(phone, session)
    page = phone.page
    page.click(f"{MENU} > summary")
    box = page.locator(f"{MENU} .export-list").bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    _, data = download(phone, f"{MENU} a[data-export='session']")
    assert strict_json(data)["session"]["id"] == session["session_id"]
    page.click(f"{MENU} > summary")
    screenshot(phone, "export-menu-phone.png")
    phone.console.assert_clean()
