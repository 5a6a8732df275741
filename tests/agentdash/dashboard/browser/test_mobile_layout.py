"""The pages on a 390×844 phone, in a real browser (see conftest.py): nothing scrolls
sideways, the session header does not overlap itself, the session page shows chat, timeline
and controls one at a time under tabs, and a span opened on the timeline shows its details
in view.

``AGENTDASH_SCREENSHOTS=<dir>`` saves screenshots there (see test_timeline_scale.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.agentdash.dashboard.browser.harness import (
    Browser,
    LiveServer,
    screenshot,
    session_generate,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LOAD_TIMEOUT = 60_000
ROW = '#span-tree [role="treeitem"]:not([hidden])'


@pytest.fixture(scope="module")
def spans_session(agentdash_server: LiveServer) -> dict[str, Any]:
    """Three runs of 100 spans: one cancelled, one failed, one succeeded."""
    return session_generate(
        agentdash_server, "spans", "--count", "300", "--per-run", "100", "--owner", "alice"
    )


@pytest.fixture(scope="module")
def chat_session(agentdash_server: LiveServer) -> dict[str, Any]:
    """120 chat events: questions, tool calls and results, answers with tables and code."""
    return session_generate(agentdash_server, "events", "--count", "120", "--owner", "alice")


def overflow(browser: Browser) -> dict[str, Any]:
    """The page's width against the window's, and the elements sticking out (for the
    message; an element in a scrolling box may stick out of the window harmlessly)."""
    found: dict[str, Any] = browser.page.evaluate(
        """() => ({
          scrollWidth: document.documentElement.scrollWidth,
          innerWidth: window.innerWidth,
          out: [...document.body.querySelectorAll("*")]
            .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
            .slice(0, 8)
            .map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className}`),
        })"""
    )
    return found


def assert_fits(browser: Browser, where: str) -> None:
    found = overflow(browser)
    assert found["scrollWidth"] <= found["innerWidth"], f"{where} scrolls sideways: {found}"


def assert_apart(browser: Browser, selectors: list[str]) -> None:
    """The elements (those that are shown) do not overlap one another."""
    boxes = [
        (s, box)
        for s in selectors
        for box in [browser.page.locator(s).first.bounding_box()]
        if box is not None and box["width"] > 0
    ]
    for i, (a, p) in enumerate(boxes):
        for b, q in boxes[i + 1 :]:
            apart = (
                p["x"] + p["width"] <= q["x"] + 0.5
                or q["x"] + q["width"] <= p["x"] + 0.5
                or p["y"] + p["height"] <= q["y"] + 0.5
                or q["y"] + q["height"] <= p["y"] + 0.5
            )
            assert apart, f"{a} {p} overlaps {b} {q}"


def show_tab(browser: Browser, panel: str) -> None:
    page = browser.page
    tab = page.locator(f"#panel-tabs [role=tab][data-panel='{panel}']")
    tab.click()
    assert tab.get_attribute("aria-selected") == "true"


def test_the_pages_fit_a_phone(
    phone: Browser, spans_session: dict[str, Any], chat_session: dict[str, Any]
) -> None:
    page = phone.page
    phone.goto("/login/")
    assert_fits(phone, "the login page")
    phone.log_in("operator")
    phone.goto("/")
    assert_fits(phone, "the home page")

    phone.goto(spans_session["path"])
    page.locator("#span-tree[data-complete='true']").wait_for(
        state="attached", timeout=LOAD_TIMEOUT
    )
    assert_apart(phone, [".session-bar .crumbs h1", ".session-bar .session-id",
                         "#run-status", "#connection"])  # fmt: skip
    tabs = page.locator("#panel-tabs [role=tab]")
    assert page.locator("#panel-tabs").is_visible()
    assert tabs.evaluate_all("tabs => tabs.map(t => t.dataset.panel)") == [
        "chat",
        "timeline",
        "controls",
    ]
    panels = {"chat": "#chat-panel", "timeline": "#timeline-panel", "controls": "#controls"}
    for name, selector in panels.items():
        show_tab(phone, name)
        assert page.locator(selector).is_visible(), name
        for other, hidden in panels.items():
            if other != name:
                assert not page.locator(hidden).is_visible(), f"{other} shows under {name}"
        assert_fits(phone, f"the session page's {name} tab")

    show_tab(phone, "timeline")
    page.locator(ROW).first.wait_for()
    # Durations are not clipped: each row's duration is whole and inside the window.
    clipped = page.evaluate(
        """(selector) => [...document.querySelectorAll(selector)]
          .map((row) => row.querySelector(".span-duration"))
          .filter((d) => d && d.textContent && (d.scrollWidth > d.clientWidth + 1 ||
                  d.getBoundingClientRect().right > window.innerWidth))
          .map((d) => d.textContent)""",
        ROW,
    )
    assert clipped == []

    phone.goto(chat_session["path"])
    page.locator("#messages > li").last.wait_for(timeout=LOAD_TIMEOUT)
    page.wait_for_timeout(300)  # the latest page of messages has settled
    assert_fits(phone, "the chat of a long session")
    screenshot(phone, "session-mobile.png")
    phone.console.assert_clean()


def test_a_span_opened_on_a_phone_shows_its_details_in_view(
    phone: Browser, spans_session: dict[str, Any]
) -> None:
    page = phone.page
    phone.log_in("alice")
    phone.goto(spans_session["path"])
    page.locator("#span-tree[data-complete='true']").wait_for(
        state="attached", timeout=LOAD_TIMEOUT
    )
    show_tab(phone, "timeline")
    rows = page.locator(ROW)
    rows.first.wait_for()
    rows.nth(2).tap()
    detail = page.locator("#span-detail")
    detail.wait_for(state="visible")
    # Drawn (the raw attributes' table is there, collapsed for kinds with a view of their own).
    page.locator("#span-detail table[aria-label='attributes']").wait_for(state="attached")
    page.wait_for_timeout(400)  # a smooth scroll, if any, has ended
    box = page.evaluate(
        """() => {
          const r = document.querySelector("#span-detail").getBoundingClientRect();
          return { top: r.top, bottom: r.bottom, height: innerHeight };
        }"""
    )
    assert box["top"] < box["height"] and box["bottom"] > 0, f"the details are out of view: {box}"
    assert_fits(phone, "the timeline with a span's details")
    screenshot(phone, "session-mobile-timeline.png")
    phone.console.assert_clean()
