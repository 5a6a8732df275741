"""The session page at scale, in Chromium (``make bench-ui``; docs/BENCHMARKS.md, "Session
page in the browser").

  .venv/bin/python bench/ui.py [--spans 1000,10000,50000] [--events 10000] [--runs 3]
                               [--usable-timeout 120] [--no-doc]

The embedded default (one daphne, an SQLite file, the in-memory channel layer; the browser
tests' harness starts it in a temporary directory), sessions generated through the app's own
services by ``bench/ui_sessions.py``, Debian's Chromium driven by Playwright (headless,
1440×900, a fresh browser context — empty cache, fresh heap — for every measurement).

For a session of spans, measured in the page (``performance.now()`` from navigation start;
an input's time is its event's ``timeStamp``; a state counts once a frame after it exists):

- **first rows**: the first ``[role=treeitem]`` row of ``#span-tree`` exists;
- **usable**: the timeline says every span is loaded (its ``aria-busy`` is ``false`` and its
  span count label shows the session's total);
- **longest task** (``PerformanceObserver`` ``longtask``, buffered; tasks under 50 ms are not
  reported, so "—" means none over 50 ms): during load (until usable), while the tree is
  scrolled to its end in 40 steps (two frames each), on the click that opens the last row's
  details, and on collapsing the first root (← on it);
- **details**: click on the last row → the details pane shows its attributes;
- **collapse**: ← on the first root, expanded → it says ``aria-expanded="false"``;
- **DOM**: elements in the document (most seen: after load, scroll and the clicks);
- **heap**: JS heap used after a forced garbage collection (CDP ``Runtime.getHeapUsage``).

For the session of chat events: first message shown, the latest message shown (the last
event's text in one of the last bubbles), the longest task until then and while scrolling
the chat to its top (older pages load), DOM and heap.

Medians of ``--runs`` measurements are written to docs/BENCHMARKS.md with the issue's goals.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _doc import DOC, doc_update  # noqa: E402
from ui_report import history_rows, results_markdown  # noqa: E402

from tests.agentdash.dashboard.browser.harness import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    PASSWORD,
    LiveServer,
    server_start,
    server_stop,
    session_generate,
)

VIEWPORT = {"width": 1440, "height": 900}
SCROLL_STEPS = 40
OWNER = "alice"
# Installed before the page's own scripts. A rAF loop notes when a wanted state first
# holds; `window.__want` (set by the bench) names what is wanted next.
PROBE = """
(() => {
  const probe = (window.__bench = { tasks: [], inputs: [], at: {} });
  window.__want = {};
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) probe.tasks.push([e.startTime, e.duration]);
    }).observe({ type: "longtask", buffered: true });
  } catch (error) {
    probe.noLongtasks = String(error);
  }
  for (const type of ["click"]) {
    addEventListener(type, (e) => probe.inputs.push([type, e.timeStamp]), true);
  }
  const checks = {
    rows: () => !!document.querySelector('#span-tree [role="treeitem"]:not([hidden])'),
    messages: () => !!document.querySelector("#messages > li"),
    usable: () => {
      const tree = document.querySelector("#span-tree");
      return !!tree && tree.dataset.complete === "true" &&
        Number(tree.dataset.spans) >= window.__want.total;
    },
    latest: () => {
      let node = document.querySelector("#messages")?.lastElementChild;
      for (let i = 0; node && i < 6; i += 1, node = node.previousElementSibling) {
        if (node.textContent.includes(window.__want.latest)) return true;
      }
      return false;
    },
    detail: () => {
      const pane = document.querySelector("#span-detail");
      return !!pane && !pane.hidden && pane.dataset.spanId === window.__want.detail &&
        !!pane.querySelector('table[aria-label="attributes"]');
    },
    collapsed: () => document.querySelector(
      `#span-tree [data-span-id="${window.__want.collapsed}"]`
    )?.getAttribute("aria-expanded") === "false",
  };
  const tick = () => {
    for (const name of Object.keys(window.__want)) {
      if (name in checks && !(name in probe.at) && window.__want[name] !== false) {
        try {
          if (checks[name]()) probe.at[name] = performance.now();
        } catch (error) {
          probe.error = String(error);
        }
      }
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})();
"""

SCROLL = """
async ([selector, steps, up]) => {
  const start = document.querySelector(selector);
  let el = start;
  const scrolls = (node) => node.scrollHeight > node.clientHeight + 1 &&
    /(auto|scroll)/.test(getComputedStyle(node).overflowY);
  while (el && !scrolls(el)) el = el.parentElement;
  el = el || document.scrollingElement;
  const frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));
  const t0 = performance.now();
  for (let i = 1; i <= steps; i += 1) {
    const room = el.scrollHeight - el.clientHeight;
    el.scrollTop = up ? room * (1 - i / steps) : room * i / steps;
    await frame();
    await frame();
  }
  if (!up) {  // the end may have grown while scrolling: go there once more
    el.scrollTop = el.scrollHeight;
    await frame();
    await frame();
  }
  return { start: t0, end: performance.now(), top: el.scrollTop,
           room: el.scrollHeight - el.clientHeight, scroller: el.id || el.className };
}
"""


def longest(tasks: list[list[float]], start: float, end: float | None) -> float:
    """The longest task that overlaps [start, end] (0 when none over 50 ms was reported)."""
    found = [d for s, d in tasks if s + d >= start and (end is None or s <= end)]
    return max(found, default=0.0)


def last_input(probe: dict[str, Any], kind: str) -> float:
    return max(t for k, t in probe["inputs"] if k == kind)


class Bench:
    def __init__(self, server: LiveServer, driver: Any, args: argparse.Namespace) -> None:
        self.server = server
        self.args = args
        self.browser = driver.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        self.state = self._log_in()

    def _log_in(self) -> Any:
        context = self.browser.new_context(viewport=VIEWPORT)
        page = context.new_page()
        page.goto(f"{self.server.url}/login/")
        page.fill("#id_username", OWNER)
        page.fill("#id_password", PASSWORD)
        with page.expect_navigation():
            page.click("form button[type=submit]")
        state = context.storage_state()
        context.close()
        return state

    def open(self, path: str, want: dict[str, Any]) -> tuple[Any, Any, Any]:
        context = self.browser.new_context(viewport=VIEWPORT, storage_state=self.state)
        context.add_init_script(f"{PROBE}\nObject.assign(window.__want, {_js(want)});")
        page = context.new_page()
        page.on("pageerror", lambda error: print(f"  page error: {error}", file=sys.stderr))
        page.on(
            "console",
            lambda m: m.type == "error" and print(f"  console: {m.text}", file=sys.stderr),
        )
        cdp = context.new_cdp_session(page)
        page.goto(f"{self.server.url}{path}", wait_until="commit")
        return context, page, cdp

    def heap_mb(self, cdp: Any) -> float:
        cdp.send("HeapProfiler.collectGarbage")
        return float(cdp.send("Runtime.getHeapUsage")["usedSize"]) / 2**20

    @staticmethod
    def dom(page: Any) -> int:
        return int(page.evaluate("document.getElementsByTagName('*').length"))

    @staticmethod
    def probe(page: Any) -> dict[str, Any]:
        found: dict[str, Any] = page.evaluate("window.__bench")
        return found

    @staticmethod
    def fcp(page: Any) -> float | None:
        """The page's first contentful paint (its header and empty panels), for reference."""
        found: float | None = page.evaluate(
            "performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null"
        )
        return found

    def wait(self, page: Any, name: str, timeout_s: float) -> float | None:
        try:
            page.wait_for_function(
                f"() => '{name}' in window.__bench.at", timeout=timeout_s * 1000, polling=100
            )
        except Exception as exc:  # Playwright's TimeoutError
            if "Timeout" not in type(exc).__name__:
                raise
            return None
        value: float = page.evaluate(f"window.__bench.at['{name}']")
        return value

    # ── a session of spans ──
    def spans_once(self, session: dict[str, Any]) -> dict[str, Any]:
        want = {"rows": True, "usable": True, "total": session["spans"]}
        context, page, cdp = self.open(session["path"], want)
        try:
            return self._spans_measure(page, cdp, session)
        finally:
            context.close()

    def _spans_measure(self, page: Any, cdp: Any, session: dict[str, Any]) -> dict[str, Any]:
        found: dict[str, Any] = {"spans": session["spans"]}
        first = self.wait(page, "rows", self.args.usable_timeout)
        found["first_ms"] = first
        usable = self.wait(page, "usable", self.args.usable_timeout)
        found["usable_ms"] = usable
        found["fcp_ms"] = self.fcp(page)
        found["shown"] = page.evaluate(
            "document.querySelector('#span-count')?.textContent.trim() || ''"
        )
        probe = self.probe(page)
        found["load_task_ms"] = longest(probe["tasks"], 0, usable)
        found["dom"] = self.dom(page)
        if usable is None:  # not usable in time: the rest would measure a half-loaded page
            found["heap_mb"] = self.heap_mb(cdp)
            return found

        scroll = page.evaluate(SCROLL, ["#span-tree", SCROLL_STEPS, False])
        probe = self.probe(page)
        found["scroll_task_ms"] = longest(probe["tasks"], scroll["start"], scroll["end"])
        found["scroll_ms"] = scroll["end"] - scroll["start"]
        found["dom"] = max(found["dom"], self.dom(page))

        last_id = session["last_span"]["span_id"]
        took, task = self.timed_click(page, "detail", last_id, ".span-name")
        found["details_ms"], found["click_task_ms"] = took, task
        found["dom"] = max(found["dom"], self.dom(page))

        page.evaluate(SCROLL, ["#span-tree", 1, True])
        root_id = session["first_root"]["span_id"]
        took, task = self.timed_click(page, "collapsed", root_id, ".twisty")
        found["collapse_ms"], found["collapse_task_ms"] = took, task
        found["dom"] = max(found["dom"], self.dom(page))
        found["heap_mb"] = self.heap_mb(cdp)
        return found

    def timed_click(
        self, page: Any, want: str, span_id: str, part: str
    ) -> tuple[float | None, float | None]:
        """Click ``part`` of the row of ``span_id`` and wait for the page to report ``want``
        for it: (the time from the click's event to that, the longest task meanwhile)."""
        page.evaluate(f"window.__want.{want} = {_js(span_id)}")
        page.locator(f'#span-tree [data-span-id="{span_id}"] {part}').click()
        done = self.wait(page, want, 30)
        probe = self.probe(page)
        clicked = last_input(probe, "click")
        took = None if done is None else done - clicked
        return took, longest(probe["tasks"], clicked, done or clicked + 5_000)

    # ── a session of chat events ──
    def events_once(self, session: dict[str, Any]) -> dict[str, Any]:
        marker = f"(turn {session['turns']})"
        context, page, cdp = self.open(session["path"], {"messages": True, "latest": marker})
        try:
            found: dict[str, Any] = {"events": session["events"]}
            found["first_ms"] = self.wait(page, "messages", self.args.usable_timeout)
            latest = self.wait(page, "latest", self.args.usable_timeout)
            found["latest_ms"] = latest
            found["fcp_ms"] = self.fcp(page)
            probe = self.probe(page)
            found["load_task_ms"] = longest(probe["tasks"], 0, latest)
            found["dom"] = self.dom(page)
            if latest is not None:
                scroll = page.evaluate(SCROLL, ["#messages", SCROLL_STEPS, True])
                probe = self.probe(page)
                found["scroll_task_ms"] = longest(probe["tasks"], scroll["start"], scroll["end"])
                found["dom"] = max(found["dom"], self.dom(page))
            found["heap_mb"] = self.heap_mb(cdp)
            return found
        finally:
            context.close()

    def close(self) -> None:
        self.browser.close()


def _js(value: Any) -> str:
    return json.dumps(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--spans",
        type=lambda text: [int(n) for n in text.split(",") if n],
        default=[1_000, 10_000, 50_000],
    )
    parser.add_argument("--events", type=lambda text: [int(n) for n in text.split(",") if n],
                        default=[10_000])  # fmt: skip
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--usable-timeout", type=float, default=120.0, help="s per wait")
    parser.add_argument("--no-doc", action="store_true", help="leave docs/BENCHMARKS.md alone")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    args.load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="agentdash-bench-ui-") as tmp:
        server = server_start(Path(tmp))
        try:
            spans, events = [], []
            for n in args.spans:
                started = time.perf_counter()
                session = session_generate(server, "spans", "--count", str(n), "--owner", OWNER)
                print(f"generated {n:,} spans in {time.perf_counter() - started:.1f} s", flush=True)
                spans.append((session, []))
            for n in args.events:
                started = time.perf_counter()
                session = session_generate(server, "events", "--count", str(n), "--owner", OWNER)
                print(
                    f"generated {n:,} events in {time.perf_counter() - started:.1f} s", flush=True
                )
                events.append((session, []))
            with sync_playwright() as driver:
                bench = Bench(server, driver, args)
                args.chromium_version = bench.browser.version
                try:
                    if spans:  # untimed: the server's and the browser's first-use costs
                        bench.spans_once(min(spans, key=lambda s: s[0]["spans"])[0])
                    for _ in range(args.runs):
                        for session, rows in spans:
                            rows.append(bench.spans_once(session))
                            print(f"{session['spans']:,} spans: {_brief(rows[-1])}", flush=True)
                        for session, rows in events:
                            rows.append(bench.events_once(session))
                            print(f"{session['events']:,} events: {_brief(rows[-1])}", flush=True)
                finally:
                    bench.close()
        except BaseException:
            print(server.log_tail(80), file=sys.stderr)
            raise
        finally:
            server_stop(server)
    args.load.append(os.getloadavg()[0])
    latest = results_markdown(spans, events, args)
    print(latest)
    if not args.no_doc:
        doc_update(
            name="bench-ui",
            heading="## Session page in the browser",
            latest=latest,
            history_header=(
                "| date | machine | session | first rows / message | usable / latest | "
                "longest scroll task | details | DOM |\n"
                "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"
            ),
            history_row=history_rows(spans, events),
        )
        print(f"\nupdated {DOC.relative_to(ROOT)}")


def _brief(row: dict[str, Any]) -> str:
    return ", ".join(
        f"{k} {v:,.0f}" if isinstance(v, float | int) and not isinstance(v, bool) else f"{k} {v}"
        for k, v in row.items()
    )


if __name__ == "__main__":
    main()
