"""The session page with big sessions, in a real browser (see conftest.py): the timeline of a
50,000-span session loads, scrolls to its end and opens its last span; the tree works by
keyboard with correct ARIA tree semantics; a cancelled run reads "cancelled" (grey) on the
run and its spans, not "error"; the run badge never says a run finished while its spans are
still loading.

Sessions are generated through the app's services, in the live server's database, by
``bench/ui_sessions.py`` (the benchmark's generator). Nothing here is timed: how fast the page
is, is ``make bench-ui``'s business (docs/BENCHMARKS.md).

``AGENTDASH_SCREENSHOTS=<dir>`` saves screenshots there (docs/screenshots/ holds the ones the
README shows; see docs/BENCHMARKS.md to regenerate them).
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest

from tests.agentdash.dashboard.browser.harness import (
    POLL_MS,
    Browser,
    LiveServer,
    screenshot,
    session_generate,
    tree_complete,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

BIG = 50_000
LOAD_TIMEOUT = 90_000  # ms: far beyond what the page needs; only a hang fails here
ROW = '#span-tree [role="treeitem"]:not([hidden])'


# ── Sessions (generated once per module, in the live server's database) ──────────────────────
@pytest.fixture(scope="module")
def big_session(agentdash_server: LiveServer) -> dict[str, Any]:
    return session_generate(agentdash_server, "spans", "--count", str(BIG), "--owner", "alice")


@pytest.fixture(scope="module")
def small_session(agentdash_server: LiveServer) -> dict[str, Any]:
    """Two runs of 60 spans, both succeeded."""
    return session_generate(
        agentdash_server, "spans", "--count", "120", "--per-run", "60",
        "--failed", "0", "--cancelled", "0", "--owner", "alice",
    )  # fmt: skip


@pytest.fixture(scope="module")
def cancelled_session(agentdash_server: LiveServer) -> dict[str, Any]:
    """Three runs of about 20 spans; the first one cancelled part-way through."""
    found = session_generate(
        agentdash_server, "spans", "--count", "60", "--per-run", "20",
        "--failed", "0", "--cancelled", "1", "--owner", "alice",
    )  # fmt: skip
    assert [run["status"] for run in found["runs"]] == ["cancelled", "succeeded", "succeeded"]
    return found


def open_session(browser: Browser, session: dict[str, Any], user: str = "alice") -> None:
    """Log in, open the session's page, and wait until its timeline has every span."""
    browser.log_in(user)
    browser.goto(session["path"])
    tree_complete(browser, session["spans"], timeout=LOAD_TIMEOUT)


def focused(browser: Browser) -> dict[str, Any]:
    """What has the keyboard focus: its role, span id, level, expanded state."""
    found: dict[str, Any] = browser.page.evaluate(
        """() => {
          const e = document.activeElement;
          return {
            role: e?.getAttribute("role") ?? null,
            id: e?.getAttribute("data-span-id") ?? null,
            level: e?.getAttribute("aria-level") ?? null,
            expanded: e?.getAttribute("aria-expanded") ?? null,
            inTree: !!e?.closest('[role="tree"]'),
            text: e?.textContent ?? "",
          };
        }"""
    )
    return found


def rows_in_order(browser: Browser) -> list[dict[str, Any]]:
    """The rows shown, top to bottom (a virtualized list places its rows where it likes in
    the DOM)."""
    found: list[dict[str, Any]] = browser.page.evaluate(
        """(selector) => [...document.querySelectorAll(selector)]
          .map((e) => ({
            top: e.getBoundingClientRect().top,
            id: e.getAttribute("data-span-id"),
            level: Number(e.getAttribute("aria-level")),
            expanded: e.getAttribute("aria-expanded"),
            text: e.textContent,
          }))
          .sort((a, b) => a.top - b.top)""",
        ROW,
    )
    return found


def in_view(browser: Browser, span_id: str) -> bool:
    """Whether the row of ``span_id`` is shown, entirely inside the tree's scrolled view."""
    found: bool = browser.page.evaluate(
        """(id) => {
          const row = document.querySelector(`#span-tree [data-span-id="${id}"]`);
          if (!row || row.hidden) return false;
          const tree = document.querySelector("#span-tree");
          const body = tree.closest(".timeline-body") || tree.parentElement;
          const view = body.getBoundingClientRect();
          const box = row.getBoundingClientRect();
          return box.height > 0 && box.top >= view.top - 1 && box.bottom <= view.bottom + 1;
        }""",
        span_id,
    )
    return found


def attribute(browser: Browser, key: str) -> str:
    """The value of ``key`` in the open details pane's raw attributes (opened if closed)."""
    pane = browser.page.locator("#span-detail")
    raw = pane.locator("details.raw-attrs")
    if raw.get_attribute("open") is None:
        raw.locator("summary").click()
    header = browser.page.locator("th", has_text=re.compile(f"^{re.escape(key)}$"))
    return pane.locator("tr", has=header).first.locator("td").inner_text()


# ── A big session ──────────────────────────────────────────────────────────────────────────
def test_a_big_session_scrolls_to_its_end_and_opens_its_last_span(
    browser: Browser, big_session: dict[str, Any]
) -> None:
    open_session(browser, big_session)
    page = browser.page
    assert page.locator("#span-count").inner_text() == f"{BIG:,} spans"
    # Only the rows in view (and a margin) are in the document, never the session.
    assert page.locator(ROW).count() < 300

    # Scroll the tree to its end, a screenful at a time for the last stretch (as a reader
    # would), after a jump most of the way.
    page.evaluate(
        """async () => {
          const body = document.querySelector("#span-tree").closest(".timeline-body")
            || document.querySelector("#span-tree").parentElement;
          const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
          for (let i = 1; i <= 20; i += 1) {
            body.scrollTop = (body.scrollHeight - body.clientHeight) * i / 20;
            await frame();
          }
          for (let i = 0; i < 5; i += 1) { body.scrollTop += body.clientHeight; await frame(); }
        }"""
    )
    last = big_session["last_span"]
    row = page.locator(f'#span-tree [data-span-id="{last["span_id"]}"]')
    row.wait_for(state="visible")
    lowest = rows_in_order(browser)[-1]
    assert lowest["id"] == last["span_id"], "the last row shown is not the session's last span"
    assert page.locator(ROW).count() < 300

    row.click()
    detail = page.locator("#span-detail")
    detail.wait_for(state="visible")
    page.locator("#span-detail table[aria-label='attributes']").wait_for(state="attached")
    assert attribute(browser, "agentdash.callback.name") == last["callback_name"] == "StepLogger"
    assert attribute(browser, "agentdash.callback.hook") == "after_agent"
    assert attribute(browser, "gen_ai.agent.name") == "capital_agent"
    assert last["span_id"] in detail.inner_text()
    # The row stays where the reader clicked it: shown, in view, selected.
    page.evaluate(  # two frames: the pane has taken its place
        "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"
    )
    assert in_view(browser, last["span_id"]), "the row clicked left the view"
    assert row.get_attribute("aria-selected") == "true"
    screenshot(browser, "session-50k-desktop.png")
    browser.console.assert_clean()


# ── Keyboard and ARIA ──────────────────────────────────────────────────────────────────────
def test_the_tree_is_one_tab_stop_and_works_by_keyboard(
    browser: Browser, small_session: dict[str, Any]
) -> None:
    open_session(browser, small_session)
    page = browser.page
    tree = page.locator("#span-tree")
    assert tree.get_attribute("role") == "tree"
    assert page.locator(ROW).count() > 10

    # One tab stop: of the tree and everything in it, one element is in the tab order.
    stops = page.evaluate(
        """() => {
          const tree = document.querySelector("#span-tree");
          return [tree, ...tree.querySelectorAll("*")]
            .filter((e) => e.tabIndex >= 0 && !e.closest("[hidden]")).length;
        }"""
    )
    assert stops == 1

    # Tab from the top of the page reaches the tree's first row; Tab again leaves the tree;
    # Shift+Tab comes back to the same row.
    page.evaluate("document.activeElement?.blur()")
    for _ in range(60):
        page.keyboard.press("Tab")
        if focused(browser)["inTree"]:
            break
    first = focused(browser)
    assert first["role"] == "treeitem", first
    root_id = small_session["first_root"]["span_id"]
    assert first["id"] == root_id and first["level"] == "1" and first["expanded"] == "true"
    page.keyboard.press("Tab")
    assert not focused(browser)["inTree"]
    page.keyboard.press("Shift+Tab")
    assert focused(browser)["id"] == root_id

    # ↓ and ↑ move; ← collapses, → expands.
    page.keyboard.press("ArrowDown")
    child = focused(browser)
    assert child["role"] == "treeitem" and child["level"] == "2", child
    assert "capital_agent" in child["text"]
    page.keyboard.press("ArrowUp")
    assert focused(browser)["id"] == root_id
    page.keyboard.press("ArrowLeft")
    assert focused(browser)["expanded"] == "false"
    page.keyboard.press("ArrowDown")  # past the collapsed run: the next run's root
    second = focused(browser)
    assert second["level"] == "1" and second["id"] != root_id, second
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowRight")
    assert focused(browser)["expanded"] == "true"
    page.keyboard.press("ArrowDown")
    assert focused(browser)["id"] == child["id"]

    # ARIA: a row that has rows under it says whether it is expanded; a leaf says nothing.
    rows = rows_in_order(browser)
    assert any(r["expanded"] is None for r in rows), "no leaf row"
    for row, below in itertools.pairwise(rows):
        assert row["expanded"] in (None, "true", "false"), row
        if below["level"] > row["level"]:
            assert row["expanded"] == "true" and below["level"] == row["level"] + 1, (row, below)
        if row["expanded"] == "true":
            assert below["level"] == row["level"] + 1, (row, below)
    callbacks = [r for r in rows if "block_keyword_guardrail" in r["text"]]
    assert callbacks and all(r["expanded"] is None for r in callbacks)

    # Enter opens the details of the focused row; Esc closes them, the focus stays put.
    page.keyboard.press("Enter")
    detail = page.locator("#span-detail")
    detail.wait_for(state="visible")
    assert detail.get_attribute("data-span-id") == child["id"]
    page.locator("#span-detail table[aria-label='attributes']").wait_for(state="attached")
    assert attribute(browser, "gen_ai.agent.name") == "capital_agent"
    page.keyboard.press("Escape")
    detail.wait_for(state="hidden")
    assert focused(browser)["id"] == child["id"]
    browser.console.assert_clean()


# ── Status ─────────────────────────────────────────────────────────────────────────────────
def _is_grey(css_color: str) -> bool:
    """An rgb()/rgba() colour of little saturation (HSL saturation ≤ 0.3: slate greys pass,
    any red, green or blue a status might be drawn in does not)."""
    r, g, b = (float(c) / 255 for c in re.findall(r"[\d.]+", css_color)[:3])
    high, low = max(r, g, b), min(r, g, b)
    lightness = (high + low) / 2
    if high == low:
        return True
    saturation = (high - low) / (1 - abs(2 * lightness - 1))
    return saturation <= 0.3


def test_a_cancelled_run_is_grey_cancelled_on_the_run_and_its_spans(
    browser: Browser, cancelled_session: dict[str, Any]
) -> None:
    open_session(browser, cancelled_session, user="operator")
    page = browser.page
    cancelled = cancelled_session["runs"][0]

    run = page.locator(f"#runs .run[data-run-id='{cancelled['id']}']")
    assert run.get_attribute("data-status") == "cancelled"
    badge = run.locator(".badge")
    assert badge.inner_text().strip() == "cancelled"
    assert _is_grey(badge.evaluate("e => getComputedStyle(e).color")), "the badge is not grey"

    stopped = cancelled["stopped_spans"]
    assert len(stopped) >= 3  # the tool it stopped in, the agent, the invocation
    for span_id in stopped:
        row = page.locator(f'#span-tree [data-span-id="{span_id}"]')
        assert row.get_attribute("data-state") == "cancelled", span_id
        text = row.inner_text()
        assert "cancelled" in text and "error" not in text, text
        mark = row.locator(".outcome", has_text="cancelled")
        assert _is_grey(mark.evaluate("e => getComputedStyle(e).color")), span_id
    # The runs that succeeded have no cancelled span.
    for other in cancelled_session["runs"][1:]:
        assert other["stopped_spans"] == []
    assert page.locator('#span-tree [data-state="cancelled"]').count() == len(stopped)

    page.locator(f'#span-tree [data-span-id="{stopped[0]}"]').click()
    status = page.locator("#span-detail tr", has=page.locator("th", has_text="status"))
    assert status.first.inner_text().split("\t")[-1].strip().startswith("cancelled")
    browser.console.assert_clean()


def test_the_run_badge_never_says_finished_while_spans_are_loading(
    browser: Browser, small_session: dict[str, Any]
) -> None:
    page = browser.page
    held: list[Any] = []
    released = False

    def hold(route: Any) -> None:  # span pages wait here until released
        if released:
            route.continue_()
        else:
            held.append(route)

    page.route(re.compile(r"/spans/\?"), hold)
    browser.log_in("alice")
    with page.expect_request(re.compile(r"/spans/\?")):  # a span page asked for, held
        browser.goto(small_session["path"])
    badge = page.locator("#run-status")
    badge.wait_for(state="visible")
    # Everything the page learns without its span pages has come: the snapshot's runs are
    # applied and its socket is live (it has said where it starts from).
    page.wait_for_selector("#connection[data-state='live']", timeout=LOAD_TIMEOUT)
    assert held, "no span page was asked for"
    assert page.locator('#span-tree[data-complete="true"]').count() == 0
    assert badge.get_attribute("data-status") not in ("succeeded", "failed", "cancelled")
    assert not re.search(r"succeeded|finished|failed|cancelled", badge.inner_text())

    released = True
    for route in held:
        route.continue_()
    tree_complete(browser, small_session["spans"], timeout=LOAD_TIMEOUT)
    page.wait_for_function(
        "() => document.querySelector('#run-status').dataset.status === 'succeeded'",
        timeout=LOAD_TIMEOUT,
        polling=POLL_MS,
    )
    assert "succeeded" in badge.inner_text()
    browser.console.assert_clean()


def test_spans_of_two_traces_with_the_same_ids_stay_apart(browser: Browser) -> None:
    """Span ids are unique only within a trace (PROTOCOL.md): the timeline's tree keys a
    span by both, so a second trace reusing ids neither replaces nor adopts the first's."""
    browser.log_in("alice")
    shape = browser.page.evaluate(
        """async () => {
          const { SpanTree } = await import("/static/dashboard/js/timeline/span_tree.js");
          const { summaryOfChange } = await import("/static/dashboard/js/common/span_summary.js");
          const tree = new SpanTree();
          const spans = [["b", "2", "1"], ["a", "1", null], ["a", "2", "1"], ["b", "1", null]];
          for (const [trace, id, parent] of spans) {
            const data = { trace_id: trace, span_id: id, parent_span_id: parent,
              name: trace + id, start_time: 1, end_time: 2, status: "ok", attributes: {} };
            tree.upsert(summaryOfChange(data), 1);
          }
          return { nodes: tree.nodes.size,
            roots: tree.roots.map((r) => [r.name, r.children.map((c) => c.name)]) };
        }"""
    )
    assert shape["nodes"] == 4
    assert sorted(shape["roots"]) == [["a1", ["a2"]], ["b1", ["b2"]]]


# ── Find, link, keys (a big session) ────────────────────────────────────────────────────────
def wait_detail(browser: Browser, span_id: str) -> None:
    """Wait until the details pane shows ``span_id``."""
    browser.page.wait_for_function(
        """(id) => {
          const pane = document.querySelector("#span-detail");
          return pane && !pane.hidden && pane.dataset.spanId === id;
        }""",
        arg=span_id,
        timeout=LOAD_TIMEOUT,
        polling=POLL_MS,
    )


def shown_matches(browser: Browser) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = browser.page.evaluate(
        """() => [...document.querySelectorAll('#span-tree [data-match]:not([hidden])')]
              .map((row) => ({
                id: row.dataset.spanId, match: row.dataset.match,
                kind: row.dataset.kind, state: row.dataset.state,
                marked: row.querySelector(".span-name mark")?.textContent ?? null,
              }))"""
    )
    return found


def test_find_narrows_a_big_session_to_its_matches_and_walks_them(
    browser: Browser, big_session: dict[str, Any]
) -> None:
    open_session(browser, big_session)
    page = browser.page
    tool = big_session["last_tool"]

    # A value only the span's attributes hold (its tool call id): the server finds it.
    page.fill("#find-text", tool["tool_call_id"])
    page.wait_for_selector('#span-tree[data-matches="1"]', state="attached", timeout=LOAD_TIMEOUT)
    page.wait_for_selector(f'#span-tree [data-match="hit"][data-span-id="{tool["span_id"]}"]')
    rows = shown_matches(browser)
    assert [r["id"] for r in rows if r["match"] == "hit"] == [tool["span_id"]]
    assert {r["match"] for r in rows if r["id"] != tool["span_id"]} <= {"context"}
    assert [r["kind"] for r in rows if r["match"] == "context"][:1] == ["invocation"]
    assert page.locator("#find-count").inner_text().startswith("1 match")
    page.press("#find-text", "Enter")
    wait_detail(browser, tool["span_id"])
    assert in_view(browser, tool["span_id"])
    assert page.locator("#find-count").inner_text().startswith("1 of 1 match")

    # Text the rows hold is marked in the name; kind narrows too.
    page.fill("#find-text", "capital_c")
    page.select_option("#find-kind", "tool")
    page.wait_for_function(
        "() => document.querySelector('#find-count').textContent.includes('matches')",
        polling=POLL_MS,
    )
    page.wait_for_selector('#span-tree [data-match="hit"] .span-name mark')
    rows = shown_matches(browser)
    hits = [r for r in rows if r["match"] == "hit"]
    assert hits and all(r["kind"] == "tool" and r["marked"] == "capital_c" for r in hits)
    matches = int(page.locator("#span-tree").get_attribute("data-matches") or 0)
    assert matches > 1_000  # every get_capital_city call of the session, not only those in view

    # Text in the attributes of most spans: the server stops at its limit and the count
    # line says so, and how to narrow it (it said only "first matches only").
    page.select_option("#find-kind", "")
    page.fill("#find-text", "capital")
    # (One condition for text and title: the answer for the previous text may say "stopped"
    # too, and the search for this one then clears the title while it runs.)
    page.wait_for_function(
        """() => {
            const count = document.querySelector('#find-count');
            return count.textContent.includes('attributes: stopped at 2,000')
                && count.title.includes('Type more of the text to narrow it');
        }""",
        timeout=LOAD_TIMEOUT,
        polling=POLL_MS,
    )

    # Errors: the status filter and "next error" agree on the session's failed spans.
    page.locator("#span-find button[type=reset]").click()
    page.wait_for_function(
        "() => document.querySelector('#span-tree').dataset.matches === ''", polling=POLL_MS
    )
    page.select_option("#find-status", "error")
    page.wait_for_selector(f'#span-tree[data-matches="{big_session["errors"]}"]', state="attached")
    # The count is set at once, the rows at the next frame: wait for the rows it counts.
    page.wait_for_function(
        """() => {
            const hits = [...document.querySelectorAll(
                '#span-tree [data-match="hit"]:not([hidden])')];
            return hits.length > 0 && hits.every((row) => row.dataset.state === "error");
        }""",
        polling=POLL_MS,
    )
    assert all(r["state"] == "error" for r in shown_matches(browser) if r["match"] == "hit")
    page.locator("#span-find button[data-find='error']").click()
    page.wait_for_function(
        "() => document.querySelector('#span-detail:not([hidden])')?.dataset.spanId",
        polling=POLL_MS,
    )
    opened = page.locator("#span-detail").get_attribute("data-span-id")
    assert (
        page.locator(f'#span-tree [data-span-id="{opened}"]').get_attribute("data-state") == "error"
    )
    # A bad duration is marked and left out, not an error.
    page.fill("#find-min", "-5")
    page.wait_for_selector("#find-min[aria-invalid]")
    browser.console.assert_clean()


def test_a_link_opens_its_span_and_the_history_walks_selections(
    browser: Browser, big_session: dict[str, Any]
) -> None:
    browser.log_in("alice")
    page = browser.page
    last, root = big_session["last_span"], big_session["first_root"]
    browser.goto(f"{big_session['path']}?trace={last['trace_id']}&span={last['span_id']}")
    wait_detail(browser, last["span_id"])
    page.evaluate(  # two frames: the pane has taken its place
        "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"
    )
    assert in_view(browser, last["span_id"]), "the linked span is not scrolled to"
    tree_complete(browser, big_session["spans"], timeout=LOAD_TIMEOUT)

    # Opening another span is a new place in the history; back and forward walk them.
    page.locator(f'#span-tree [data-span-id="{last["span_id"]}"]').focus()
    page.keyboard.press("Home")
    page.keyboard.press("Enter")
    wait_detail(browser, root["span_id"])
    assert f"span={root['span_id']}" in page.url
    page.go_back()
    wait_detail(browser, last["span_id"])
    assert f"span={last['span_id']}" in page.url
    page.go_forward()
    wait_detail(browser, root["span_id"])
    page.keyboard.press("Escape")  # closing the details is a place too
    page.wait_for_selector("#span-detail", state="hidden")
    assert "span=" not in page.url
    page.go_back()
    wait_detail(browser, root["span_id"])

    # A run's link opens its first span; a link to a span that is not here says so.
    run = big_session["runs"][0]
    browser.goto(f"{big_session['path']}?run={run['id']}")
    wait_detail(browser, root["span_id"])
    assert f"trace={run['trace_id']}" in page.url
    browser.goto(f"{big_session['path']}?trace={'0' * 32}&span={'0' * 16}")
    tree_complete(browser, big_session["spans"], timeout=LOAD_TIMEOUT)
    banner = page.locator("#banner")
    banner.wait_for()
    assert "not in this session" in banner.inner_text()
    browser.console.assert_clean()


def test_the_page_keys(browser: Browser, big_session: dict[str, Any]) -> None:
    open_session(browser, big_session)
    page = browser.page
    page.keyboard.press("?")
    assert page.locator("#keymap").evaluate("(d) => d.open")
    assert "Next error" in page.locator("#keymap").inner_text()
    page.keyboard.press("Escape")
    assert not page.locator("#keymap").evaluate("(d) => d.open")

    page.keyboard.press("j")  # the first row
    wait_detail(browser, big_session["first_root"]["span_id"])
    page.keyboard.press("j")
    page.wait_for_function(
        "(id) => document.querySelector('#span-detail').dataset.spanId !== id",
        arg=big_session["first_root"]["span_id"],
        polling=POLL_MS,
    )
    page.keyboard.press("k")
    wait_detail(browser, big_session["first_root"]["span_id"])
    page.keyboard.press("e")
    page.wait_for_function(
        """() => {
          const id = document.querySelector('#span-detail').dataset.spanId;
          const row = document.querySelector(`#span-tree [data-span-id="${id}"]`);
          return row?.dataset.state === "error";
        }""",
        polling=POLL_MS,
    )
    page.keyboard.press("G")  # the last row shown: opened, with the keyboard on it
    page.wait_for_function(
        """(first) => {
          const id = document.querySelector('#span-detail').dataset.spanId;
          return id && id !== first && document.activeElement?.dataset.spanId === id;
        }""",
        arg=big_session["first_root"]["span_id"],
        polling=POLL_MS,
    )
    last = focused(browser)["id"]
    assert last == page.locator("#span-detail").evaluate("(d) => d.dataset.spanId")
    page.keyboard.press("g")  # and back to the first
    wait_detail(browser, big_session["first_root"]["span_id"])
    assert focused(browser)["id"] == big_session["first_root"]["span_id"]
    page.keyboard.press("/")
    assert page.evaluate("() => document.activeElement.id") == "find-text"
    page.keyboard.type("j")  # typed into the box, not a key of the page
    assert page.locator("#find-text").input_value() == "j"
    page.keyboard.press("Escape")  # clears the box first
    assert page.locator("#find-text").input_value() == ""
    page.evaluate("() => document.activeElement.blur()")
    page.keyboard.press("c")
    assert page.evaluate("() => document.activeElement.id") == "composer-text"
    browser.console.assert_clean()


# ── The waterfall: each run on its own scale ───────────────────────────────────────────────
def bars(browser: Browser) -> list[dict[str, Any]]:
    """Every row shown: its kind, trace, and where its bar's fill lies in its bar column, as
    fractions of the column (0 = left edge, 1 = right edge)."""
    found: list[dict[str, Any]] = browser.page.evaluate(
        """(selector) => [...document.querySelectorAll(selector)].map((row) => {
          const column = row.querySelector(".span-bar").getBoundingClientRect();
          const fill = row.querySelector(".bar-fill").getBoundingClientRect();
          return {
            id: row.dataset.spanId, kind: row.dataset.kind, top: row.getBoundingClientRect().top,
            left: (fill.left - column.left) / column.width,
            right: (fill.right - column.left) / column.width,
            visible: Math.min(fill.right, column.right) - Math.max(fill.left, column.left),
          };
        })""",
        ROW,
    )
    return sorted(found, key=lambda row: row["top"])


def axis_label(browser: Browser) -> str:
    return str(browser.page.locator(".tl-axis-label").text_content())


def test_every_run_has_its_own_scale_on_the_waterfall(
    browser: Browser, small_session: dict[str, Any]
) -> None:
    """Two runs of different lengths: fitted, each run's bar fills the column and every span
    of either run has a visible bar (the axis was pinned to the run in view: a later, longer
    run's late spans were pushed off the column, empty, and Fit did not help)."""
    open_session(browser, small_session)
    page = browser.page
    first, second = small_session["runs"]
    assert first["trace_id"] != second["trace_id"]
    roots = page.locator('#span-tree [data-kind="invocation"]:not([hidden])')
    roots.first.wait_for()
    # Fold the first run: its root, then the second run's root and its spans are in view.
    roots.first.locator(".twisty").click()
    page.wait_for_function(
        "() => document.querySelectorAll("
        "'#span-tree [data-kind=\"invocation\"]:not([hidden])').length === 2",
        polling=POLL_MS,
    )

    def check_fitted() -> None:
        shown = bars(browser)
        runs = [row for row in shown if row["kind"] == "invocation"]
        assert len(runs) == 2
        for run in runs:  # fitted: the whole run, and 2% of room after its end
            assert run["left"] == pytest.approx(0, abs=0.01), run
            assert run["right"] == pytest.approx(1 / 1.02, abs=0.01), run
        empty = [row for row in shown if row["visible"] < 1]
        assert not empty, f"{len(empty)} of {len(shown)} bars are not shown: {empty[:3]}"
        assert all(row["left"] >= -0.02 and row["right"] <= 1.02 for row in shown)

    check_fitted()
    assert axis_label(browser).endswith("run 1 of 2")
    # A span of the second run selected: the axis measures that run.
    span_id = page.locator('#span-tree [data-kind="tool"]:not([hidden])').last.get_attribute(
        "data-span-id"
    )
    # By its id, scrolled to and settled first: the tree draws only the rows in view and
    # gives a row element to another span as it scrolls, so an element found before a scroll
    # may show another span by the time it is clicked.
    later = page.locator(f'#span-tree .span[data-span-id="{span_id}"]')
    later.scroll_into_view_if_needed()
    page.evaluate(
        "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"
    )
    later.locator(":scope > .span-row").click()
    # Selected, not only scrolled into view (a row scrolled to the top puts its run first in
    # view, which the axis follows too): the row that says so is this span's.
    page.wait_for_function(
        "(id) => document.querySelector('#span-tree [aria-selected=\"true\"]')"
        "?.closest('[data-span-id]')?.dataset.spanId === id"
        " && document.querySelector('.tl-axis-label').textContent.endsWith('run 2 of 2')",
        arg=span_id,
        polling=POLL_MS,
    )
    # Back to the top (scrolled, not moved by key: the selection stays): both runs' roots in
    # view, the later span still selected, its run still the axis's.
    page.locator(".timeline-body").evaluate("(body) => { body.scrollTop = 0; }")
    page.evaluate(
        "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"
    )
    assert axis_label(browser).endswith("run 2 of 2")
    check_fitted()
    # Zoomed in, then fitted again: every run whole once more.
    page.locator('.tl-zoom-button[data-zoom="in"]').click()
    page.locator('.tl-zoom-button[data-zoom="in"]').click()
    zoomed = [row for row in bars(browser) if row["kind"] == "invocation"]
    assert all(row["right"] > 1 for row in zoomed), zoomed  # past the column's right edge
    page.locator('.tl-zoom-button[data-zoom="fit"]').click()
    check_fitted()
    browser.console.assert_clean()


def test_a_model_calls_name_is_whole_beside_its_tokens(
    browser: Browser, small_session: dict[str, Any]
) -> None:
    """The model's name ("gemini-2.5-flash") is what tells model rows apart: with the
    operator's narrower timeline it stays whole and the tokens give way (it was cut to
    "gemini-2.5-f…" while the tokens stayed whole)."""
    browser.log_in("operator")
    browser.goto(small_session["path"])
    page = browser.page
    rows = page.locator('#span-tree .span[data-kind="model"]:not([hidden])')
    rows.first.wait_for()
    found = rows.evaluate_all(
        """rows => rows.slice(0, 20).map(row => {
          const name = row.querySelector('.span-name');
          const tokens = row.querySelector('.tokens');
          return [name.textContent, name.scrollWidth - name.clientWidth,
                  Boolean(tokens && !tokens.hidden && tokens.clientWidth > 0)];
        })"""
    )
    assert found and all(name.startswith("gemini") for name, _, _ in found), found
    assert all(cut <= 1 for _, cut, _ in found), f"model names cut: {found}"
    assert all(shown for _, _, shown in found), f"tokens not shown: {found}"
