"""The hostile corpus (tests/security/xss_corpus.json) through every view a browser shows,
with the page watched (xss_watch.py): script executions (the ``xss()`` trap, CSP
violations, dialogs), requests outside the test server, popups and dangerous DOM must all
be zero, per surface; a failure names the surface and gives every count.

This module's server also loads ``xss_probe`` (tests/security/xss_agent.py), the agent
that puts each vector into its model text (streamed, then stored and sanitized), a tool
call's arguments and its result, the session state, span attributes (keys and values),
callback names, a tool name the model makes up, its description and its instruction. The
vectors go through in batches, one run and one page per batch:

- the live page (chat, timeline, operator controls), every span's details opened, then the
  page loaded again (snapshot and span pages instead of the socket);
- what people type: the same vectors in the chat message, the operator's state editor
  (key, value, reason), the reason of a callback switch;
- the names: agents and callbacks on the home page and in the controls, switched;
- policies in the admin (name, config, agents, reason; a version diff; refused configs
  whose errors quote them), and the admin's lists and pages of the hostile rows;
- the session's data endpoints opened directly (JSON shown as text, never as HTML).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from agentdash.core.conf import DEMO_AGENTS
from tests.agentdash.dashboard.browser import conftest as browser_conftest
from tests.agentdash.dashboard.browser.harness import (
    Browser,
    LiveServer,
    ServerError,
    server_start,
    server_stop,
)
from tests.agentdash.dashboard.browser.xss_watch import XssWatch, watched
from tests.security.corpus import Vector, batches, vectors
from tests.security.xss_agent import AGENT_NAME, ASK

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PROBE = "tests.security.xss_agent:root_agent"
BATCH = 40  # vectors per run and page
LIVE_TIMEOUT = 60_000  # ms
DONE = "a chart of the results"  # the final answer's image, shown as its alt text

SMALL = [v for v in vectors() if not v.big]
BIG = [v for v in vectors() if v.big]


def storable(text: str) -> str:
    """``text`` as the server stores it: NUL and lone surrogates become U+FFFD."""
    return "".join("\ufffd" if c == "\x00" or 0xD800 <= ord(c) <= 0xDFFF else c for c in text)


@pytest.fixture(scope="module")
def agentdash_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """This module's own daphne (conftest's, plus the probe agent)."""
    agents = ",".join([*DEMO_AGENTS, PROBE])
    try:
        server = server_start(
            tmp_path_factory.mktemp("xss-server"), env_extra={"AGENTDASH_AGENTS": agents}
        )
    except ServerError as exc:
        pytest.fail(str(exc))
    reports = browser_conftest._server_for_reports  # a failure's report ends with its log
    reports.insert(0, server)
    try:
        yield server
    finally:
        reports.remove(server)
        server_stop(server)


@pytest.fixture
def watch(browser: Browser) -> XssWatch:
    return watched(browser.page.context, browser.page, browser.server.url)


def settle(page: Any) -> None:
    """Let queued tasks run (CSP violation events are dispatched as tasks)."""
    page.evaluate("() => new Promise((done) => setTimeout(() => requestAnimationFrame(done)))")


def check(watch: XssWatch, browser: Browser, surface: str) -> None:
    settle(browser.page)
    watch.check(browser.page, surface)


def log_in(browser: Browser, username: str) -> None:
    """Through the login form (pressing Enter in it: the top bar has forms of its own)."""
    page = browser.page
    browser.goto("/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", browser.server.password)
    with page.expect_navigation():
        page.press("#id_password", "Enter")
    assert page.url == f"{browser.server.url}/", f"login as {username} failed"


def ask(browser: Browser, text: str) -> None:
    page = browser.page
    page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    page.fill("#composer-text", text)
    page.press("#composer-text", "Enter")


def wait_for_done(browser: Browser) -> None:
    page = browser.page
    answer = page.locator(".msg-agent:not(.streaming) .msg-body.md", has_text=DONE)
    answer.first.wait_for(timeout=LIVE_TIMEOUT)
    page.wait_for_function(
        "() => !document.querySelector(\"#span-tree .span[data-state='running']\")"
        " && !document.querySelector('#messages .msg.streaming')",
        timeout=LIVE_TIMEOUT,
    )


def ask_for(batch: tuple[Vector, ...]) -> str:
    """The run's message: the ids, then what a person could type of the batch."""
    typed = [v.text for v in batch if v.typeable]
    return "\n\n".join([f"{ASK} {' '.join(v.id for v in batch)}", *typed])


def start_chat(browser: Browser, agent: str, text: str) -> str:
    """ "New chat" for ``agent`` on the home page, then ``text`` as the first message (on the
    session page, or on the new-chat page where a session starts with its first message);
    the session page's path."""
    page = browser.page
    browser.goto("/")
    with page.expect_navigation():
        page.click(f"form.new-chat button[data-agent='{agent}']")
    if "/sessions/" in page.url:
        ask(browser, text)
    else:
        page.fill("#composer-text", text)
        with page.expect_navigation(url=re.compile(r"/sessions/[^/]+/$"), timeout=LIVE_TIMEOUT):
            page.press("#composer-text", "Enter")
    return str(page.url).removeprefix(browser.server.url)


def run_probe(browser: Browser, batch: tuple[Vector, ...], user: str = "operator") -> str:
    log_in(browser, user)
    path = start_chat(browser, AGENT_NAME, ask_for(batch))
    wait_for_done(browser)
    return path


OPEN_SPANS = """
async () => {
  const tree = document.querySelector("#span-tree");
  const detail = document.querySelector("#span-detail");
  const key = (k) => tree.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true }));
  const tick = () => new Promise((done) => setTimeout(done));
  const loading = () => /Loading/.test(detail.textContent || "");
  const active = () => tree.querySelector('[role="treeitem"][tabindex="0"]');
  const visited = new Set();
  const once = new Set();
  let opened = 0;
  key("End");
  for (let i = 0; i < 20000; i++) {
    const row = active();
    if (!row || visited.has(row.dataset.spanId)) break;  // ArrowUp stayed on the first row
    visited.add(row.dataset.spanId);
    // Every tool call (a vector in its arguments and result), the last model call (every
    // vector of the run in its request), each callback (name and hook) and other span once.
    const kind = row.dataset.kind;
    const sameAs = { tool: row.dataset.spanId, model: "model" }[kind] ?? row.dataset.name;
    if (!once.has(sameAs)) {
      once.add(sameAs);
      key("Enter");
      // From the page's cache of live span data at once; otherwise fetched: wait for it.
      for (let wait = 0; loading() && wait < 5000; wait++) await tick();
      opened++;
    }
    key("ArrowUp");
  }
  return [visited.size, opened];
}
"""


def open_spans(browser: Browser) -> tuple[int, int]:
    """Walk the timeline by keyboard, from its end, opening spans' details, each loaded in
    full: every tool call, the last model call, and one span of each other name (callbacks,
    agents); (spans walked, details opened)."""
    walked, opened = browser.page.evaluate(OPEN_SPANS)
    return int(walked), int(opened)


def tool_arguments(browser: Browser) -> list[dict[str, Any]]:
    """The arguments of every tool call in the chat, read back from the page's text."""
    texts: list[str] = browser.page.locator("#messages details.tool-call pre").evaluate_all(
        "nodes => nodes.map((n) => n.textContent)"
    )
    return [json.loads(text) for text in texts]


# ── The watch itself ────────────────────────────────────────────────────────────────────
def test_the_watch_counts_every_kind(browser: Browser, watch: XssWatch) -> None:
    """The instruments can fail: each kind of thing they count, done on purpose."""
    log_in(browser, "alice")
    page = browser.page
    page.evaluate("() => xss('control')")
    page.evaluate(
        """() => {
          const img = document.createElement("img");
          img.setAttribute("src", "/not-there.png");
          img.setAttribute("onerror", "xss('control handler')");
          document.body.append(img);
        }"""
    )
    page.evaluate("() => alert('control')")
    page.evaluate(
        """() => {
          const a = document.createElement("a");
          a.href = "https://evil.example/control";
          a.target = "_blank";
          document.body.append(a);
          a.click();
        }"""
    )
    for _ in range(100):  # the popup's request and the CSP report arrive as events
        settle(page)
        counts = watch.counts()
        if all(counts[k] for k in ("trap", "csp", "dialog", "request", "popup")):
            break
        page.wait_for_timeout(50)
    with pytest.raises(AssertionError) as failed:
        watch.check(page, "control")
    counts = watch.counts()
    for kind in ("trap", "csp", "dialog", "request", "popup", "dom"):
        assert counts[kind] >= 1, (kind, counts)
        assert f"{kind} " in str(failed.value)
    assert "control" in str(failed.value)


# ── What the agent produces ─────────────────────────────────────────────────────────────
@pytest.mark.parametrize(
    "batch",
    list(batches(SMALL, BATCH)),
    ids=lambda batch: f"{batch[0].id}..{batch[-1].id}",
)
def test_agent_output_in_chat_timeline_and_details(
    browser: Browser, watch: XssWatch, batch: tuple[Vector, ...]
) -> None:
    run_probe(browser, batch)
    check(watch, browser, "live page: chat, timeline, controls")

    # Each vector reached the page as data: its tool call's arguments, read back from the
    # text the page shows, are the vector (as stored).
    shown = {args.get("vector_id"): args.get("text") for args in tool_arguments(browser)}
    for vector in batch:
        assert shown.get(vector.id) == storable(vector.text), vector.id

    walked, opened = open_spans(browser)
    assert walked >= 3 * len(batch) and opened >= len(batch), (walked, opened)
    check(watch, browser, f"span details ({opened} of {walked} spans opened)")

    browser.page.reload()
    wait_for_done(browser)
    check(watch, browser, "the page loaded again (snapshot, span pages)")


def test_oversized_agent_output(browser: Browser, watch: XssWatch) -> None:
    """Megabytes and deep nesting: the page shows every part (cut where the server cuts) and
    runs nothing."""
    run_probe(browser, tuple(BIG))
    check(watch, browser, "live page with oversized output")
    parts = browser.page.locator("#messages .msg-agent .msg-part .msg-body.md").count()
    assert parts >= len(BIG), parts
    open_spans(browser)
    check(watch, browser, "span details of oversized output")
