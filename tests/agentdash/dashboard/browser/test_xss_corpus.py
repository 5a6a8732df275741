"""The hostile corpus (tests/security/xss_corpus.json) through every view a browser shows,
with the page watched (xss_watch.py): script executions (the ``xss()`` trap, CSP
violations, dialogs), requests outside the test server, popups and dangerous DOM must all
be zero, per surface; a failure names the surface and gives every count.

This module's server also loads ``xss_probe`` (tests/security/xss_agent.py), the agent
that puts each vector into its model text (streamed, then stored and sanitized), a tool
call's arguments and its result, the session state, span attributes (keys and values),
callback names, a tool name the model makes up, its description and its instruction. The
vectors go through in batches, one run and one page per batch:

- the live page (chat, timeline, operator controls), the spans' details (every model and
  tool call, each callback once), then the page loaded again (snapshot and span pages
  instead of the socket);
- what people type: the same vectors in the chat message, the operator's state editor
  (key, value, reason), the reason of a callback switch;
- the names: agents and callbacks on the home page and in the controls, switched;
- policies in the admin (name, config, agents, reason; a version diff; refused configs
  whose errors quote them), and the admin's lists and pages of the hostile rows;
- the session's data endpoints opened directly (JSON shown as text, never as HTML);
- the timeline's find bar, the Export downloads, and the query strings and fragments the
  pages read (span links, filters, where a form goes back to).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import pytest

from agentdash.core.conf import DEMO_AGENTS
from tests.agentdash.dashboard.browser import conftest as browser_conftest
from tests.agentdash.dashboard.browser.harness import (
    POLL_MS,
    Browser,
    Console,
    LiveServer,
    ServerError,
    server_start,
    server_stop,
    switched,
    tree_complete,
)
from tests.agentdash.dashboard.browser.xss_watch import XssWatch, watched
from tests.security.corpus import Vector, batches, by_id, vectors
from tests.security.xss_agent import AGENT_NAME, ASK

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PROBE = "tests.security.xss_agent:root_agent"
BATCH = 50  # vectors per run and page: fewer page loads, the same coverage
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
        polling=POLL_MS,
    )


def ask_for(batch: tuple[Vector, ...]) -> str:
    """The run's message: what a person could type of the batch (the first of it becomes
    the session's title), then the ids for the probe agent."""
    typed = [v.text for v in batch if v.typeable]
    return "\n\n".join([*typed, f"{ASK} {' '.join(v.id for v in batch)}"])


def run_probe(
    browser: Browser,
    batch: tuple[Vector, ...],
    watch: XssWatch | None = None,
    user: str = "operator",
) -> str:
    """A run of the probe agent on ``batch`` in a new session; its page's path once every
    part has arrived. If the answer never comes (a page that navigated away, a script that
    broke it), ``watch`` reports what it counted first."""
    browser.log_in(user)
    try:
        path = browser.new_chat(AGENT_NAME, first=ask_for(batch))
        wait_for_done(browser)
    except Exception as exc:
        if watch is not None:
            check(watch, browser, f"the page while the run went on ({exc.__class__.__name__})")
        raise
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
    // Every tool call (a vector in its arguments and result) and model call (the vector as
    // its response, the run so far as the conversation it saw); each callback (name and
    // hook) and other span once: the rest repeat it.
    const kind = row.dataset.kind;
    const own = kind === "tool" || kind === "model";
    const sameAs = own ? row.dataset.spanId : row.dataset.name;
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
    full: every tool call and model call, and one span of each other name (callbacks, agents);
    (spans walked, details opened)."""
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
    browser.log_in("alice")
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
        if all(counts[k] for k in ("trap", "csp", "dialog", "request", "popup")) and watch.failed:
            break
        page.wait_for_timeout(50)
    with pytest.raises(AssertionError) as failed:
        watch.check(page, "control")
    counts = watch.counts()
    for kind in ("trap", "csp", "dialog", "request", "popup", "dom"):
        assert counts[kind] >= 1, (kind, counts)
        assert f"{kind} " in str(failed.value)
    assert "control" in str(failed.value)
    assert watch.failed == ["https://evil.example/control"]  # asked for, never answered


# ── What the agent produces ─────────────────────────────────────────────────────────────
@pytest.mark.parametrize(
    "batch",
    list(batches(SMALL, BATCH)),
    ids=lambda batch: f"{batch[0].id}..{batch[-1].id}",
)
def test_agent_output_in_chat_timeline_and_details(
    browser: Browser, watch: XssWatch, batch: tuple[Vector, ...]
) -> None:
    run_probe(browser, batch, watch)
    check(watch, browser, "live page: chat, timeline, controls")

    # Each vector reached the page as data: its tool call's arguments, read back from the
    # text the page shows, are the vector (as stored).
    shown = {args.get("vector_id"): args.get("text") for args in tool_arguments(browser)}
    for vector in batch:
        assert shown.get(vector.id) == storable(vector.text), vector.id

    walked, opened = open_spans(browser)
    assert walked >= 3 * len(batch) and opened >= 2 * len(batch), (walked, opened)
    check(watch, browser, f"span details ({opened} of {walked} spans opened)")

    browser.page.reload()
    wait_for_done(browser)
    check(watch, browser, "the page loaded again (snapshot, span pages)")


def test_oversized_agent_output(browser: Browser, watch: XssWatch) -> None:
    """Megabytes and deep nesting: the page shows every part (cut where the server cuts) and
    runs nothing."""
    run_probe(browser, tuple(BIG), watch)
    check(watch, browser, "live page with oversized output")
    parts = browser.page.locator("#messages .msg-agent .msg-part .msg-body.md").count()
    assert parts >= len(BIG), parts
    # A line of 150,000 characters with no break (the 2 MB one, as stored) wraps in its
    # message: nothing is wider than the page, at a desktop's width and a phone's.
    for width, height in ((1440, 900), (390, 844)):
        browser.page.set_viewport_size({"width": width, "height": height})
        overflow = browser.page.evaluate(WIDER_THAN_THE_PAGE)
        assert overflow == [], (width, overflow)
    open_spans(browser)
    check(watch, browser, "span details of oversized output")


WIDER_THAN_THE_PAGE = """
() => {
  const page = document.documentElement.clientWidth;
  const over = (m) => m.getBoundingClientRect().width > page + 1
    || m.scrollWidth > m.clientWidth + 1;
  const wide = [...document.querySelectorAll("#messages .msg")].filter(over)
    .map((m) => [m.className, Math.round(m.getBoundingClientRect().width), m.scrollWidth]);
  const whole = document.documentElement.scrollWidth;
  if (whole > page + 1) wide.push(["page", page, whole]);
  return wide;
}
"""


# ── One probe session for the views around it ───────────────────────────────────────────
SAMPLE = tuple(SMALL[::5])  # every kind, a fifth of the small vectors


@pytest.fixture(scope="module")
def probe_session(chromium: Any, agentdash_server: LiveServer) -> str:
    """The path of one operator's session of the probe agent, run on :data:`SAMPLE`."""
    context = chromium.new_context()
    try:
        context.set_default_timeout(15_000)
        made = Browser(page=context.new_page(), console=Console(), server=agentdash_server)
        return run_probe(made, SAMPLE)
    finally:
        context.close()


def typed_sample() -> list[Vector]:
    """What a person could type: a quarter of the typeable vectors, every kind among them."""
    return [v for v in vectors() if v.typeable][::4]


# ── What people type ────────────────────────────────────────────────────────────────────
EDIT_STATE = """
async ([key, value, reason, pollMs, timeoutMs]) => {
  const status = document.getElementById("state-status");
  delete status.dataset.kind;  // the mark this edit's answer sets
  for (const [id, text] of [["state-key", key], ["state-value", value], ["state-reason", reason]]) {
    const field = document.getElementById(id);
    field.value = text;
    field.dispatchEvent(new Event("input", { bubbles: true }));
  }
  document.querySelector("#state-form button[type=submit]").click();
  for (let waited = 0; waited < timeoutMs; waited += pollMs) {
    const kind = status.dataset.kind;
    if (kind === "ok" || kind === "error") return kind;
    await new Promise((done) => setTimeout(done, pollMs));
  }
  return "no answer";
}
"""


def edit_state(browser: Browser, key: str, value: str, reason: str) -> bool:
    """One edit through the operator's state form (its fields filled as a paste fills them,
    its button clicked: the page's own handlers run); whether it was saved (else refused,
    with a message). One round trip to the page: fifty edits by Playwright's fill and click
    waited for two rendered frames per action, most of the test's time."""
    kind = browser.page.evaluate(EDIT_STATE, [key, value, reason, POLL_MS, LIVE_TIMEOUT])
    assert kind in ("ok", "error"), f"the state form gave no answer for key {key[:60]!r}"
    return bool(kind == "ok")


def test_the_operators_state_editor(browser: Browser, watch: XssWatch, probe_session: str) -> None:
    """Each vector as a key, as a JSON string value and as the reason: saved or refused
    with a message, the state table and the chat's operator notes show it as text."""
    browser.log_in("operator")
    page = browser.page
    browser.goto(probe_session)
    page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    saved = 0
    for vector in typed_sample():
        text = vector.text
        saved += edit_state(browser, text[:200], json.dumps(text), text[:500])
    assert saved >= len(typed_sample()) // 2, saved  # blank keys are refused, the rest saved
    check(watch, browser, "state editor: keys, values, reasons; the operator notes")
    page.reload()
    page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    check(watch, browser, "state editor's writes, the page loaded again")


OBJECT_INTERNALS = ("__proto__", "constructor", "toString", "hasOwnProperty", "valueOf")


def test_state_keys_named_like_object_internals(
    browser: Browser, watch: XssWatch, probe_session: str
) -> None:
    """Keys a JavaScript object holds already (``__proto__``, ``constructor``, …), with
    object values: each is a row of the state table like any key, live and loaded again."""
    browser.log_in("operator")
    page = browser.page
    browser.goto(probe_session)
    page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    for key in OBJECT_INTERNALS:
        assert edit_state(browser, key, json.dumps({"polluted": key}), f"key {key}"), key

    def shown() -> dict[str, str]:
        rows = page.locator("#state-table tr").evaluate_all(
            "rows => rows.map((r) => [r.querySelector('th').textContent,"
            " r.querySelector('td').textContent])"
        )
        return {key: value for key, value in rows if key in OBJECT_INTERNALS}

    for when in ("live", "loaded again"):
        expected = {k: json.dumps({"polluted": k}, separators=(",", ":")) for k in OBJECT_INTERNALS}
        assert shown() == expected, when
        assert page.evaluate("() => ({}).polluted") is None, when
        check(watch, browser, f"state keys named like object internals ({when})")
        page.reload()
        page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)


def test_names_and_switches(browser: Browser, watch: XssWatch, probe_session: str) -> None:
    """Hostile callback names and the agent's description on the home page, the new-chat
    page and the controls; each callback switched off and on with a hostile reason."""
    browser.log_in("operator")
    page = browser.page
    check(watch, browser, "home page: sessions list and agents (names, description)")
    browser.new_chat(AGENT_NAME)
    check(watch, browser, "new-chat page (description, tools)")
    browser.goto(probe_session)
    page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    switches = page.locator(f"#callbacks .callback[data-agent='{AGENT_NAME}']")
    assert switches.count() >= 3, switches.count()
    reasons = iter(typed_sample())
    for i in range(switches.count()):
        box = switches.nth(i).locator("input[data-scope='session']")
        for _ in range(2):  # off, then on again
            page.fill("#control-reason", next(reasons).text[:500])
            switched(browser, box)
    check(watch, browser, "callback switches with hostile names and reasons")
    browser.goto("/admin/controls/callbacksetting/")
    check(watch, browser, "admin: callback settings")


def test_renamed_and_searched_sessions(
    browser: Browser, watch: XssWatch, probe_session: str
) -> None:
    """Vectors as session titles (renamed in place on the sessions list) and as the list's
    search."""
    browser.log_in("operator")
    page = browser.page
    session_id = probe_session.strip("/").split("/")[-1]
    link = page.locator(f".session-title[href='{probe_session}']")
    row = page.locator("tr", has=link)
    for vector in typed_sample()[::4]:
        title = vector.text[:120].strip()
        if not title:
            continue
        row.locator(".rename-link").click()
        row.locator(".rename-form input[name=title]").fill(title)
        with page.expect_response(lambda r: f"/sessions/{session_id}/rename/" in r.url):
            row.locator(".rename-form button[type=submit]").click()
        check(watch, browser, f"sessions list renamed {vector.id}")
    page.reload()
    check(watch, browser, "sessions list with a hostile title, loaded again")
    for vector in typed_sample()[::6]:
        browser.goto("/?" + urlencode({"q": vector.text[:200]}))
        check(watch, browser, f"sessions list searched for {vector.id}")


# ── Policies, and the admin's views of hostile rows ─────────────────────────────────────
def admin_save(browser: Browser) -> None:
    with browser.page.expect_navigation():
        browser.page.click("#content-main input[name=_save]")


def test_policies_in_the_admin(browser: Browser, watch: XssWatch) -> None:
    """Policies named by vectors, with vectors in their config, agents and reasons; the
    list, the form, a version's diff, and refused configs whose errors quote the vectors."""
    browser.log_in("operator")
    page = browser.page
    sample = [v for v in typed_sample() if v.text.strip()]
    values = [v.text for v in sample]
    for n, vector in enumerate(sample[:6]):
        browser.goto("/admin/controls/policy/add/")
        page.fill("#id_name", f"{n} {vector.text[:120]}")
        page.select_option("#id_kind", "tool_guard")
        config = {
            "tools": {
                "echo_vector": {
                    "allowed_values": {"text": values},
                    "patterns": {"vector_id": ".*|" + "|".join(v.id for v in sample)},
                    "max_length": {vector.text[:60] or "k": 10},
                }
            }
        }
        page.fill("#id_config", json.dumps(config))
        page.fill("#id_agents_text", f"nobody_{n}")
        page.fill("#id_reason", vector.text[:500])
        admin_save(browser)
        check(watch, browser, f"admin: policy {vector.id} saved, the list")
    page.locator("#result_list tbody a").first.click()
    page.wait_for_load_state()
    config = json.loads(page.input_value("#id_config"))
    config["tools"]["echo_vector"]["allowed_values"]["text"] = [*values[::-1], "<b>new</b>"]
    page.fill("#id_config", json.dumps(config))
    page.fill("#id_reason", values[-1][:500])
    admin_save(browser)
    page.locator("#result_list tbody a").first.click()
    page.wait_for_load_state()
    assert page.locator(".policy-diff").count() == 1
    check(watch, browser, "admin: a policy's form with its last change (diff)")
    # Refused: the errors quote what was typed.
    browser.goto("/admin/controls/policy/add/")
    page.fill("#id_name", values[0][:120])
    page.select_option("#id_kind", "query")
    page.fill("#id_config", json.dumps({"tables": values[:20], values[1][:40]: values[2]}))
    page.fill("#id_reason", "refused")
    admin_save(browser)
    assert page.locator(".errorlist").count() >= 1
    check(watch, browser, "admin: a refused policy, its errors quoting the vectors")


ADMIN_PAGES = (
    "/admin/agent_sessions/agentsession/",
    "/admin/agent_sessions/agentsession/{id}/change/",
    "/admin/agent_sessions/agentsession/{id}/state/",
    "/admin/agent_sessions/sessionevent/",
    "/admin/spans/span/",
    "/admin/runs/run/",
    "/admin/changes/sessionchange/",
    "/admin/core/auditentry/",
)


def test_admin_views_of_the_probe_session(
    browser: Browser, watch: XssWatch, probe_session: str
) -> None:
    browser.log_in("operator")
    session_id = probe_session.strip("/").split("/")[-1]
    for template in ADMIN_PAGES:
        path = template.format(id=session_id)
        response = browser.goto(path)
        assert response is not None and response.status == 200, path
        check(watch, browser, f"admin: {path}")
    for listing in ("/admin/agent_sessions/sessionevent/", "/admin/spans/span/"):
        browser.goto(listing)
        browser.page.locator("#result_list tbody a").first.click()
        browser.page.wait_for_load_state()
        check(watch, browser, f"admin: a row of {listing}")


def test_data_endpoints_opened_directly(
    browser: Browser, watch: XssWatch, probe_session: str
) -> None:
    """The page's JSON, opened as a page: served as JSON (never sniffed as HTML), shown as
    text."""
    browser.log_in("operator")
    page = browser.page.request.get(f"{browser.server.url}{probe_session}spans/").json()
    first = dict(zip(page["fields"], page["rows"][0], strict=True))
    paths = [
        "snapshot/",
        "events/",
        "spans/",
        f"spans/{first['trace_id']}/{first['span_id']}/",
        "spans/search/?" + urlencode({"q": "<script>"}),
    ]
    for path in paths:
        response = browser.goto(probe_session + path)
        assert response is not None and response.status == 200, path
        headers = response.headers
        assert headers["content-type"].startswith("application/json"), (path, headers)
        assert headers.get("x-content-type-options") == "nosniff", (path, headers)
        check(watch, browser, f"{path} opened directly")


# ── The views around the timeline: find, export ─────────────────────────────────────────
FIND = ("<img", "onerror", "<svg onload", "xss(", "javascript:", "{{ 7*7 }}", "\u202e")


def test_find_and_its_highlights(browser: Browser, watch: XssWatch, probe_session: str) -> None:
    """Vectors and their pieces typed into the timeline's find bar: names marked, the
    server's attribute search asked, the next match opened."""
    browser.log_in("operator")
    page = browser.page
    browser.goto(probe_session)
    page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    needles = [*FIND, *(v.text[:200] for v in typed_sample()[::8])]
    for needle in needles:
        with page.expect_response(lambda r: "/spans/search/" in r.url):
            page.fill("#find-text", needle)
        page.press("#find-text", "Enter")  # the next match, its details opened
        check(watch, browser, f"find {needle[:40]!r}")
    page.fill("#find-text", "onerror")
    marks = page.locator("#span-tree .span:not([hidden]) mark")
    marks.first.wait_for(timeout=LIVE_TIMEOUT)
    marked = marks.all_inner_texts()
    assert marked and all(text.lower() == "onerror" for text in marked), marked


def test_export_downloads(browser: Browser, watch: XssWatch, probe_session: str) -> None:
    """The session and its traces downloaded from the Export menu: attachments of JSON (a
    browser saves them, never renders them), holding the vectors as data."""
    browser.log_in("operator")
    page = browser.page
    browser.goto(probe_session)
    page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    for which in ("session", "otlp"):
        if not page.locator("#export-menu").evaluate("(menu) => menu.open"):
            page.click("#export-menu summary")
        link = page.locator(f"#export-menu a[data-export='{which}']")
        with page.expect_download() as download_info:
            link.click()
        document = json.loads(Path(download_info.value.path()).read_text(encoding="utf-8"))
        assert document, which
        response = page.request.get(f"{browser.server.url}{link.get_attribute('href')}")
        headers = response.headers
        assert headers["content-type"].startswith("application/json"), headers
        assert headers["content-disposition"].startswith("attachment"), headers
        assert headers.get("x-content-type-options") == "nosniff", headers
    check(watch, browser, "export menu and downloads")
    dumped = json.dumps(document)
    assert "onerror" in dumped  # the vectors travel as data


# ── Addresses ───────────────────────────────────────────────────────────────────────────
ADDRESS_VALUES = (
    "javascript:xss(1)",
    "//evil.example/",
    "https://evil.example/",
    *(by_id(i).text for i in ("attr-break-tag", "script-close-json", "django-var")),
)


def test_hostile_addresses(browser: Browser, watch: XssWatch, probe_session: str) -> None:
    """Vectors in the query strings and fragments the pages read (span links, the sessions
    list's filters, where renaming and deleting go back to, where logging in goes)."""
    page = browser.page
    browser.goto("/login/?" + urlencode({"next": "javascript:xss(1)"}))
    page.fill("#id_username", "operator")
    page.fill("#id_password", browser.server.password)
    with page.expect_navigation():
        page.press("#id_password", "Enter")
    assert page.url.startswith(browser.server.url), page.url
    check(watch, browser, "logged in with a hostile next")
    for value in ADDRESS_VALUES:
        link = {"span": value, "trace": value, "run": value}
        browser.goto(f"{probe_session}?{urlencode(link)}#{quote(value)}")
        page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
        check(watch, browser, f"session page linked to {value!r}")
        filters = {"q": value, "agent": value, "status": value, "with_errors": value}
        browser.goto("/?" + urlencode({**filters, "owner": value}))
        check(watch, browser, f"sessions list filtered by {value!r}")
        browser.goto(f"{probe_session}delete/?" + urlencode({"next": value}))
        check(watch, browser, f"delete page going back to {value!r}")
        browser.goto(f"{probe_session}rename/?" + urlencode({"next": value}))
        page.fill("#id_title", value[:120])
        with page.expect_navigation():
            page.click("main form button[type=submit]")
        assert page.url.startswith(browser.server.url + "/"), page.url
        check(watch, browser, f"renamed, going back to {value!r}")


# ── Spans that came in over OTLP ────────────────────────────────────────────────────────
OPEN_EVERY_SPAN = """
async () => {
  const tree = document.querySelector("#span-tree");
  const detail = document.querySelector("#span-detail");
  const key = (k) => tree.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true }));
  const tick = () => new Promise((done) => setTimeout(done));
  const active = () => tree.querySelector('[role="treeitem"][tabindex="0"]');
  const visited = new Set();
  key("Home");
  for (let i = 0; i < 20000; i++) {
    const row = active();
    if (!row || visited.has(row.dataset.spanId)) break;  // ArrowDown stayed on the last row
    visited.add(row.dataset.spanId);
    if (row.getAttribute("aria-expanded") === "false") key("ArrowRight");
    key("Enter");
    const loading = () => /Loading/.test(detail.textContent || "");
    for (let wait = 0; loading() && wait < 5000; wait++) await tick();
    key("ArrowDown");
  }
  return visited.size;
}
"""


def utf8(text: str) -> str:
    """``text`` as protobuf can carry it (strings are UTF-8: no lone surrogate)."""
    return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)


def ingested_export(batch: tuple[Vector, ...], conversation: str, number: int) -> bytes:
    """An OTLP export with each vector wherever a sender may put text: the agent's and the
    tool's names, span names, a model call's messages, a tool call's arguments and result,
    a guardrail's decision (name, reason, policy), a status message, an event, a link's trace
    state and attributes (the link leads to a stored span: drawn as an anchor), the resource's
    attributes and the instrumentation scope. Every other span names the probe agent, so its
    guardrails page lists them too."""
    from tests.agentdash.ingest.otlp_bodies import request_of, span, value

    spans = []
    for i, vector in enumerate(batch):
        vector = Vector(vector.id, vector.kind, utf8(vector.text))
        trace = f"{number + 1:08x}{i + 1:024x}"  # batches apart: a span id is its own
        agent = AGENT_NAME if i % 2 else vector.text[:200]
        common = {"gen_ai__conversation__id": conversation, "gen_ai__agent__name": agent}
        sid = [f"{number:04x}{4 * i + k:012x}" for k in range(1, 5)]
        spans += [
            span(trace, sid[0], f"invoke_agent {vector.text[:200]}",
                 gen_ai__operation__name="invoke_agent", **common),
            span(trace, sid[1], "chat", parent=sid[0],
                 gen_ai__operation__name="chat", gen_ai__request__model=vector.text[:100],
                 gen_ai__input__messages=json.dumps([{"role": "user", "parts": [
                     {"type": "text", "content": vector.text}]}]),
                 gen_ai__output__messages=json.dumps([{"role": "assistant", "parts": [
                     {"type": "text", "content": vector.text}]}]), **common),
            span(trace, sid[2], f"execute_tool {vector.text[:200]}",
                 parent=sid[0], gen_ai__operation__name="execute_tool",
                 gen_ai__tool__name=vector.text[:200], gen_ai__tool__call__arguments=vector.text,
                 gen_ai__tool__call__result=vector.text, **common),
            span(trace, sid[3], f"callback {vector.text[:100]}",
                 parent=sid[0], agentdash__guardrail__name=vector.text[:200],
                 agentdash__guardrail__decision=vector.text[:64] if i % 3 == 0 else "blocked",
                 agentdash__guardrail__reason=vector.text,
                 agentdash__guardrail__policy=vector.text[:200],
                 agentdash__callback__hook="before_tool", **common),
        ]  # fmt: skip
        spans[-1].status.code = 2  # ERROR, with the vector as its message
        spans[-1].status.message = vector.text
        spans[-1].events.add(name=vector.text[:200], time_unix_nano=1_700_000_000_500_000_000)
        link = spans[-1].links.add(
            trace_id=bytes.fromhex(trace), span_id=bytes.fromhex(sid[2]), trace_state=vector.text
        )
        link.attributes.add(key=vector.text[:200] or "empty", value=value(vector.text))
    request = request_of(*spans, service="xss ingest")
    resource_spans = request.resource_spans[0]
    for i, vector in enumerate(batch):
        resource_spans.resource.attributes.add(key=f"xss.{i}", value=value(utf8(vector.text)))
    scope = resource_spans.scope_spans[0].scope
    scope.name, scope.version = utf8(batch[0].text)[:300], utf8(batch[-1].text)[:300]
    scope.attributes.add(key=utf8(batch[0].text)[:200] or "empty", value=value(batch[0].id))
    return request.SerializeToString()


def test_ingested_spans_on_every_page_that_shows_them(browser: Browser, watch: XssWatch) -> None:
    """The corpus as an OTLP sender would send it, every small vector stored: the owner's
    session page of the sample (every kind: chat, timeline, every span's details, loaded live
    and again), the sessions list, the session's guardrails page and the agent's (operators:
    every vector, the rest's conversation too), the comparison of the session with itself.
    (Every vector through the timeline and the span details is the agent-output tests' work:
    the same views, on the probe agent's spans.)"""
    from tests.agentdash.ingest.ingest_server import key_create, otlp_send

    # Its project is the probe agent's name: the agent's guardrails page lists its sessions.
    key = key_create(browser.server.env, "alice", AGENT_NAME)
    rest = tuple(v for v in SMALL if v not in SAMPLE)
    sent = [(batch, "xss-ingested-rest") for batch in batches(rest, BATCH)]
    sent.append((SAMPLE, "xss-ingested"))  # last: the newest session, first on her list
    for n, (batch, conversation) in enumerate(sent):
        otlp_send(browser.server.url, key, ingested_export(batch, conversation, n))
    browser.log_in("alice")
    link = browser.page.locator("a.session-title[href*='/sessions/otlp-']").first
    path = link.get_attribute("href")
    assert path, "the ingested session is not on its owner's list"
    check(watch, browser, "sessions list with an ingested session")
    browser.goto(path)
    browser.page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    tree_complete(browser, 4 * len(SAMPLE), timeout=LIVE_TIMEOUT)
    walked = browser.page.evaluate(OPEN_EVERY_SPAN)
    assert walked == 4 * len(SAMPLE), walked
    check(watch, browser, f"ingested session: timeline and every span's details ({walked})")
    browser.page.reload()
    browser.page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    check(watch, browser, "ingested session loaded again")
    session_id = path.strip("/").split("/")[-1]
    with browser.page.expect_navigation():  # alice logs out; an operator comes
        browser.page.click("header form[action='/logout/'] button")
    browser.log_in("operator")
    for page, surface, rows in [
        (f"/sessions/{session_id}/guardrails/", "the session's guardrails page", len(SAMPLE)),
        (f"/agents/{AGENT_NAME}/guardrails/", "the agent's guardrails page", len(SMALL)),
        (f"/agents/{AGENT_NAME}/guardrails/?decision=stopped", "the agent's, filtered", 0),
        (f"/compare/?a={session_id}&b={session_id}", "the session compared with itself", 0),
    ]:
        browser.goto(page)
        if rows:  # the vectors are there to be shown: a page that shows none proves nothing
            shown = browser.page.locator(".decision-list tbody tr").count()
            assert shown >= rows // 2, (surface, shown)
        check(watch, browser, surface)
    remote_controls(browser, watch)


def name_of(vector: Vector) -> str:
    """A vector as a name the controls API takes (1 to 128 characters, not blank)."""
    text = utf8(vector.text)[:128]
    return text if text.strip() else f"blank {vector.id}"


def remote_controls(browser: Browser, watch: XssWatch) -> None:
    """An app elsewhere registers the sample as its agents', callbacks' and tools' names: an
    operator opens its session's page (the callbacks under Controls) and the admin's list of
    remote processes."""
    from tests.agentdash.ingest.ingest_server import key_create, otlp_send
    from tests.agentdash.ingest.otlp_bodies import request_of, span

    key = key_create(browser.server.env, "alice", "xss-remote")
    export = request_of(span("7" * 32, "7" * 16, "invoke_agent remote",
                             gen_ai__conversation__id="xss-remote"))  # fmt: skip
    otlp_send(browser.server.url, key, export.SerializeToString())
    registration = {
        "host": name_of(SAMPLE[0]), "root_agent": name_of(SAMPLE[1]),
        "versions": {name_of(v)[:60]: name_of(v)[:60] for v in SAMPLE[:20]},
        "agents": [{"name": name_of(v), "tools": [name_of(v)],
                    "callbacks": [{"slot": "before_tool", "name": name_of(v)}]}
                   for v in SAMPLE[:200]],
    }  # fmt: skip
    body = json.dumps(registration).encode()
    otlp_send(browser.server.url, key, body, path="/v1/agentdash/processes")
    browser.goto("/")
    link = browser.page.locator("a.session-title[href*='/sessions/otlp-']").first
    path = link.get_attribute("href")
    assert path
    browser.goto(path)
    browser.page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    shown = browser.page.locator("#callbacks li").count()
    assert shown >= min(len(SAMPLE), 200) // 2, shown  # the names are there to be shown
    check(watch, browser, "a remote app's callbacks under the operator's controls")
    browser.goto("/admin/remote/remoteprocess/")
    check(watch, browser, "the admin's remote processes")
