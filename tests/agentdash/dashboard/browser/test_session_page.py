"""The session page in a real browser, against the real server (see conftest.py).

What a person does: log in through the form, start a chat with the capital agent, ask a
question, watch the answer and the live timeline; an operator sees and uses the controls;
nobody sees someone else's session. Every page must load without a CSP violation or a
script error.

``AGENTDASH_SCREENSHOTS=<dir>`` saves screenshots of the session page there.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tests.agentdash.dashboard.browser.harness import POLL_MS, Browser, screenshot, switched
from tests.agentdash.dashboard.browser.test_mobile_layout import assert_apart

pytestmark = [pytest.mark.browser, pytest.mark.slow]

QUESTION = "What is the capital of France?"
LIVE_TIMEOUT = 30_000  # ms: a run on the offline model takes well under a second
HEADER_PARTS = ["h1", ".pill.agent", ".session-id", ".pill.model", "#session-usage",
                "#run-status", "#export-menu", "#connection"]  # fmt: skip


def ask(browser: Browser, text: str) -> None:
    """Send ``text`` in the chat: on a new-chat page it starts the session (whose page
    opens), on a session's page it goes over the live connection."""
    page = browser.page
    if page.locator("#new-chat-form").count():
        browser.send_first(text)
        page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
        return
    page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    page.fill("#composer-text", text)
    page.press("#composer-text", "Enter")


def wait_for_answer(browser: Browser, containing: str) -> None:
    answer = browser.page.locator(".msg-agent:not(.streaming) .msg-body.md", has_text=containing)
    answer.first.wait_for(timeout=LIVE_TIMEOUT)
    browser.page.locator("#span-tree .span[data-state='running']").first.wait_for(
        state="detached", timeout=LIVE_TIMEOUT
    )  # every span has ended
    # Streamed text (partial messages) has been replaced by the stored events.
    assert browser.page.locator("#messages .msg.streaming").count() == 0


def first_answered(browser: Browser, sockets_script: str) -> None:
    """Alice's new chat with the capital agent, its first question answered, on pages whose
    sockets ``sockets_script`` (run first on every page) makes fail on demand."""
    browser.page.add_init_script(sockets_script)
    browser.log_in("alice")
    browser.new_chat("capital_agent")
    ask(browser, QUESTION)
    wait_for_answer(browser, "Paris")


# ── Pages (no live connection needed) ──────────────────────────────────────────────────────
def test_logging_in_through_the_form(browser: Browser) -> None:
    browser.log_in("alice")
    page = browser.page
    assert page.locator("h1").first.inner_text() == "Your sessions"
    assert page.locator("form.new-chat button[data-agent='capital_agent']").is_visible()
    browser.console.assert_clean()


def test_a_wrong_password_is_refused(browser: Browser) -> None:
    browser.goto("/login/")
    browser.page.fill("#id_username", "alice")
    browser.page.fill("#id_password", "not the password")
    browser.page.click("form button[type=submit]")
    assert "didn't match" in browser.page.locator(".error").inner_text()
    browser.console.assert_clean()


def test_new_chat_opens_the_session_page(browser: Browser) -> None:
    browser.log_in("alice")
    page = browser.page
    # The sessions listed, by id (a row's markup differs per page load: its forms' CSRF
    # tokens are masked anew each time).
    sessions = "rows => rows.map(r => r.dataset.sessionId)"
    listed = page.locator("tr.session-row").evaluate_all(sessions)
    browser.new_chat("capital_agent")
    assert page.locator("#composer-text").is_visible()
    assert page.locator(".pill.model").inner_text() == "offline model"
    browser.goto("/")  # New chat alone stores nothing:
    assert page.locator("tr.session-row").evaluate_all(sessions) == listed

    browser.new_chat("capital_agent")
    path = browser.send_first(QUESTION)
    # The session is called by its title (its first message), with its agent beside it.
    assert page.locator(".crumbs h1").inner_text() == QUESTION
    assert page.locator(".crumbs .pill.agent").inner_text() == "capital_agent"
    assert page.locator(".pill.model").inner_text() == "offline model"
    for selector in ("#messages", "#composer-text", "#span-tree"):
        assert page.locator(selector).count() == 1
    assert page.locator("#controls").count() == 0  # no operator controls for users
    # The scripts ran (ES modules under the CSP): the socket is at least trying.
    state = page.locator("#connection").get_attribute("data-state")
    assert state in ("connecting", "replaying", "live", "reconnecting")
    browser.goto("/")
    assert page.locator(f"a[href='{path}']").count() == 1  # listed under "Your sessions"
    browser.console.assert_clean(allow_websocket_failures=True)


def test_the_pages_are_csp_clean(browser: Browser) -> None:
    """No CSP violation, no script error, no missing static file on any page — the live
    connection aside (the live tests below assert it)."""
    browser.goto("/login/")
    browser.log_in("operator")
    browser.new_chat("support_desk")
    browser.send_first("Hello")
    # The modules ran and the socket connected: what they would have reported is in.
    browser.page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    browser.console.assert_clean(allow_websocket_failures=True)


# What moves without end on the session page: the connection's dot while it (re)connects, the
# typing dots, a running span's bar and the dot before its clock. Made here as the page's
# scripts make them, so that every one is on the page at once.
MOVING_PARTS = """() => {
  const add = (parent, tag, attrs) => {
    const el = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, value);
    el.setAttribute("data-motion-probe", "");
    parent.append(el);
    return el;
  };
  const conn = add(document.body, "span", {class: "conn", "data-state": "reconnecting"});
  add(conn, "span", {class: "dot"});
  const dots = add(document.body, "span", {class: "dots"});
  for (let i = 0; i < 3; i++) add(dots, "i", {});
  const span = add(document.body, "div", {class: "span", "data-state": "running"});
  add(add(span, "div", {class: "bar"}), "div", {class: "bar-fill"});
  add(span, "span", {class: "span-duration"});
}"""
# Only the parts added above: the page's own may still move (its run's last span and typing
# dots until the run's end reaches the page, which can come after the answer's text).
ENDLESS = """() => document.getAnimations()
  .filter((a) => a.effect.target?.hasAttribute("data-motion-probe"))
  .filter((a) => a.effect.getTiming().iterations === Infinity).length"""


def test_asked_for_less_motion_nothing_moves(browser: Browser) -> None:
    """A reader who asks for less motion (prefers-reduced-motion) sees nothing that moves
    without end: the states show by colour and text alone. By default, they move."""
    browser.log_in("alice")
    browser.new_chat("capital_agent", first=QUESTION)
    wait_for_answer(browser, "Paris")  # the page's own run has ended: nothing of it moves
    page = browser.page
    page.evaluate(MOVING_PARTS)
    page.emulate_media(reduced_motion="no-preference")
    assert page.evaluate(ENDLESS) == 6  # the dot, three typing dots, the bar, the clock's dot
    page.emulate_media(reduced_motion="reduce")
    assert page.evaluate(ENDLESS) == 0


def test_alice_cannot_open_bobs_session(browser: Browser) -> None:
    browser.log_in("bob")
    bobs = browser.new_chat("capital_agent", first=QUESTION)
    browser.log_out()
    browser.log_in("alice")
    response = browser.goto(bobs)
    assert response is not None and response.status == 404
    browser.goto("/")
    assert browser.page.locator(f"a[href='{bobs}']").count() == 0


def test_the_operator_sees_the_controls(browser: Browser) -> None:
    browser.log_in("operator")
    browser.new_chat("capital_agent", first=QUESTION)
    page = browser.page
    controls = page.locator("#controls")
    assert controls.is_visible()
    names = page.locator("#callbacks .callback").evaluate_all(
        "items => items.map(i => i.dataset.callback)"
    )
    assert set(names) == {
        "block_keyword_guardrail",
        "add_disclaimer",
        "redirect_canada",
        "annotate_usa",
        "StepLogger",
        "gen_ai.content_capture",
    }
    assert page.locator("#callbacks input[data-scope='session']:checked").count() == 6
    for selector in ("#state-form", "#runs", "#control-reason"):
        assert page.locator(selector).is_visible()
    # Tabbing through the controls scrolls the controls, never the page (its top bar stays).
    for width, height in ((1440, 900), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        if page.locator("#tab-controls").is_visible():
            page.click("#tab-controls")
        page.focus("#control-reason")
        for _ in range(40):
            page.keyboard.press("Tab")
            moved = page.evaluate(
                "() => [document.scrollingElement.scrollTop, "
                "document.querySelector('.session-bar').getBoundingClientRect().top]"
            )
            assert moved[0] == 0 and moved[1] >= 0, (width, moved)
    browser.console.assert_clean(allow_websocket_failures=True)


# ── Live: chat, timeline and controls over the websocket ─────────────────────────────────
def test_a_chat_with_the_capital_agent(browser: Browser) -> None:
    browser.log_in("alice")
    browser.new_chat("capital_agent")
    ask(browser, QUESTION)
    page = browser.page
    page.locator(".msg-user .msg-body", has_text=QUESTION).first.wait_for()
    wait_for_answer(browser, "Paris")

    # The tool call and its result, as collapsible blocks of JSON text.
    call = page.locator("details.tool-call", has_text="get_capital_city").first
    call.locator("summary").click()
    assert "France" in call.locator("pre").inner_text()
    assert "Paris" in page.locator("details.tool-result pre").first.text_content()

    # The timeline: agent, model, tool and callback spans, nested, all ended.
    tree = page.locator("#span-tree")
    for prefix in ("invoke_agent", "generate_content", "execute_tool"):
        assert tree.locator(f".span[data-name^='{prefix}']").count() >= 1, prefix
    callbacks = tree.locator(".span[data-kind='callback']")
    assert callbacks.count() >= 4
    assert tree.locator(".span[data-kind='callback'] .outcome-passed").count() >= 1
    tool = tree.locator(".span[data-kind='tool']").first
    assert tool.locator(":scope > .span-row .span-name").inner_text() == "get_capital_city"
    # Nesting is the rows' aria-level (the tree is a flat, virtualized list of rows): a model
    # call's parent row — the nearest row above it one level up — is its agent's.
    parents = page.evaluate(
        """() => {
          const rows = [...document.querySelectorAll('#span-tree [role="treeitem"]:not([hidden])')]
            .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top);
          const level = (row) => Number(row.getAttribute("aria-level"));
          return rows.flatMap((row, i) => {
            if (row.dataset.kind !== "model") return [];
            const parent = rows.slice(0, i).reverse().find((r) => level(r) === level(row) - 1);
            return [parent ? parent.dataset.kind : null];
          });
        }"""
    )
    assert parents and set(parents) == {"agent"}, parents
    assert tree.locator(".span[data-kind='model'] .tokens").count() >= 1
    assert tree.locator(".span[data-state='running']").count() == 0

    # Clicking a span shows its details; its raw attributes, one click away, are text.
    tool.locator(":scope > .span-row").click()
    detail = page.locator("#span-detail")
    detail.wait_for()
    detail.locator("details.raw-attrs > summary").click()
    row = detail.locator("tr", has=page.locator("th", has_text=re.compile(r"^gen_ai\.tool\.name$")))
    assert row.locator("td").inner_text() == "get_capital_city"

    screenshot(browser, "session-user.png")
    browser.console.assert_clean()


def test_a_message_shows_the_time_it_was_sent_in_the_readers_zone(abroad: Browser) -> None:
    abroad.log_in("alice")
    abroad.new_chat("capital_agent")
    ask(abroad, QUESTION)
    wait_for_answer(abroad, "Paris")
    path = abroad.page.url.removeprefix(abroad.server.url)
    page = abroad.page
    event_id = page.locator(".msg-user .msg-part[data-event-id]").first.get_attribute(
        "data-event-id"
    )
    shown = page.locator(".msg-user .msg-meta time").first.inner_text()

    events = page.request.get(f"{abroad.server.url}{path}events/").json()["events"]
    (event,) = [e for e in events if e["id"] == event_id]
    sent = datetime.fromtimestamp(event["timestamp"], ZoneInfo("Asia/Kolkata"))
    # The reader's wall clock, 24-hour, in ASCII digits like the durations beside it.
    assert shown == sent.strftime("%H:%M:%S"), (shown, event["timestamp"])
    abroad.console.assert_clean()


def test_the_operator_watches_and_steers(browser: Browser) -> None:
    browser.log_in("operator")
    browser.new_chat("capital_agent")
    page = browser.page
    ask(browser, QUESTION)
    wait_for_answer(browser, "Paris")
    assert page.locator("#runs .run[data-status='succeeded']").count() == 1

    # Switch the after-model callback off for this session, with a reason.
    page.fill("#control-reason", "checking the answer without the disclaimer")
    switch = page.locator(
        "#callbacks .callback[data-callback='add_disclaimer'] input[data-scope='session']"
    )
    switched(browser, switch)
    assert not switch.is_checked()

    # The next answer has no disclaimer, and the timeline says the callback was disabled.
    ask(browser, "And the capital of Japan?")
    wait_for_answer(browser, "Tokyo")
    tokyo = page.locator(".msg-agent .msg-body.md", has_text="Tokyo").first.inner_text()
    assert "checked by after_model" not in tokyo
    disabled = page.locator("#span-tree .span[data-kind='callback'] .outcome-disabled")
    assert disabled.count() >= 1

    # Edit the state, based on the version the page knows.
    page.fill("#state-key", "favourite_city")
    page.fill("#state-value", '"Paris"')
    page.fill("#state-reason", "browser test")
    page.click("#state-form button[type=submit]")
    page.locator("#state-status[data-kind='ok']").wait_for(timeout=LIVE_TIMEOUT)
    row = page.locator("#state-table tr", has=page.locator("th", has_text="favourite_city"))
    assert row.locator("td").inner_text() == '"Paris"'

    page.locator("#span-tree .span[data-kind='model'] > .span-row").first.click()
    # An operator's full header at 1440 px: nothing painted over anything else.
    assert_apart(browser, [f".session-bar {part}" for part in HEADER_PARTS])
    screenshot(browser, "session-operator.png")
    browser.console.assert_clean()


def test_a_switch_whose_socket_drops_before_the_answer_says_so_and_works_again(
    browser: Browser,
) -> None:
    """The socket closes after the page asked for a switch and before the server answered:
    the page says the change may or may not have been made and the switch can be used again
    (it had stayed disabled, "Switching…", for good); once the page is back, it goes
    through."""
    page = browser.page
    dropped: list[str] = []

    def route(ws: Any) -> None:
        server = ws.connect_to_server()

        def from_page(message: str | bytes) -> None:
            if not dropped and isinstance(message, str) and '"callback.toggle"' in message:
                dropped.append(message)
                ws.close()  # the page's socket: nothing can answer on it any more
            else:
                server.send(message)

        ws.on_message(from_page)

    page.route_web_socket(re.compile(r"/ws/sessions/[0-9a-f]{32}/$"), route)
    browser.log_in("operator")
    browser.new_chat("capital_agent")
    ask(browser, QUESTION)
    wait_for_answer(browser, "Paris")
    page.fill("#control-reason", "a switch on a socket that drops")
    switch = page.locator(
        "#callbacks .callback[data-callback='add_disclaimer'] input[data-scope='session']"
    )
    switch.evaluate("(input) => input.click()")
    status = page.locator("#callbacks-status[data-kind='error']")
    status.wait_for(timeout=LIVE_TIMEOUT)
    assert dropped and "may or may not have been made" in status.inner_text()
    assert switch.is_enabled()
    status.scroll_into_view_if_needed()
    screenshot(browser, "switch-given-up.png")
    page.set_viewport_size({"width": 390, "height": 844})  # the controls behind their tab
    screenshot(browser, "switch-given-up-phone.png")
    page.set_viewport_size({"width": 1440, "height": 900})
    page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    switched(browser, switch)  # the page is back: the same switch goes through
    assert not switch.is_checked()


def test_a_switch_changed_while_the_page_was_away_shows_on_the_same_switch(
    browser: Browser,
) -> None:
    """Another tab switches a callback off while this page hears nothing of it
    (`callback.changed` is not replayed); once this page's socket is back, the snapshot it
    reads shows the change on the switch already drawn: the element under the pointer, and
    the focus on it, stay (a list drawn anew under a click took the click with it)."""
    page = browser.page
    sockets: list[Any] = []

    def route(ws: Any) -> None:
        server = ws.connect_to_server()

        def from_server(message: str | bytes) -> None:
            if not (isinstance(message, str) and '"callback.changed"' in message):
                ws.send(message)  # this page hears no switch of another tab

        server.on_message(from_server)
        sockets.append(ws)

    page.route_web_socket(re.compile(r"/ws/sessions/[0-9a-f]{32}/$"), route)
    browser.log_in("operator")
    browser.new_chat("capital_agent")
    ask(browser, QUESTION)
    wait_for_answer(browser, "Paris")
    selector = "#callbacks .callback[data-callback='add_disclaimer'] input[data-scope='session']"
    switch = page.locator(selector)
    assert switch.is_checked()
    switch.evaluate("(input) => { input.dataset.seen = 'before'; input.focus(); }")

    other = page.context.new_page()
    other.goto(page.url)
    other.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    other.fill("#control-reason", "switched in another tab")
    other.locator(selector).evaluate("(input) => input.click()")
    other.locator("#callbacks-status[data-kind='ok']").wait_for(timeout=LIVE_TIMEOUT)
    other.close()
    assert switch.is_checked()  # not heard here

    sockets[-1].close(code=1001, reason="test drops the connection")
    page.wait_for_function(
        "(s) => !document.querySelector(s).checked",
        arg=selector,
        polling=POLL_MS,
        timeout=LIVE_TIMEOUT,
    )  # the snapshot read once the page is back live
    assert switch.get_attribute("data-seen") == "before"
    assert switch.evaluate("(input) => document.activeElement === input")
    browser.console.assert_clean()


def test_markup_in_messages_stays_text(browser: Browser) -> None:
    """The offline model echoes the user's words into the tool call, its result and the
    answer: the real path for untrusted text. None of it may become markup."""
    attack = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script> Atlantis'
    browser.log_in("alice")
    browser.new_chat("capital_agent")
    ask(browser, f"What is the capital of {attack}?")
    page = browser.page
    wait_for_answer(browser, "Atlantis")
    assert attack in page.locator(".msg-user .msg-body").first.inner_text()
    assert page.locator("#messages img, #messages script, #span-tree img").count() == 0
    page.locator("#span-tree .span[data-kind='tool'] > .span-row").first.click()
    assert page.locator("#span-detail img, #span-detail script").count() == 0
    assert page.evaluate("window.__xss") is None
    browser.console.assert_clean()


def test_a_dropped_connection_resumes_without_gaps_or_duplicates(browser: Browser) -> None:
    """The client reconnects by itself and says hello with the last seq it has: the server
    replays only what it missed."""
    page = browser.page
    routes: list[Any] = []
    hellos: list[dict[str, Any]] = []

    def route(ws: Any) -> None:
        server = ws.connect_to_server()

        def from_page(message: str | bytes) -> None:
            frame = json.loads(message)
            if frame.get("type") == "hello":
                hellos.append(frame)
            server.send(message)

        ws.on_message(from_page)
        routes.append(ws)

    page.route_web_socket(re.compile(r"/ws/sessions/"), route)
    browser.log_in("alice")
    browser.new_chat("capital_agent")
    ask(browser, QUESTION)  # starts the session: its page opens from a snapshot
    wait_for_answer(browser, "Paris")
    ask(browser, "And the capital of Spain?")  # this one arrives over the socket
    wait_for_answer(browser, "Madrid")
    messages = page.locator("#messages > .msg").count()
    spans = page.locator("#span-tree .span").count()

    routes[-1].close(code=1001, reason="test drops the connection")
    page.wait_for_function(
        "document.querySelector('#connection').dataset.state !== 'live'", polling=POLL_MS
    )
    page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    assert len(hellos) == 2
    assert hellos[1]["after_seq"] > hellos[0]["after_seq"] > 0  # from the snapshot's, on
    assert page.locator("#messages > .msg").count() == messages
    assert page.locator("#span-tree .span").count() == spans

    ask(browser, "And the capital of Japan?")
    wait_for_answer(browser, "Tokyo")
    assert page.locator(".msg-agent .msg-body.md", has_text="Paris").count() == 1
    assert page.locator(".msg-user").count() == 3
    browser.console.assert_clean()


# Sockets refused while the page's session storage says so: each is closed before it opens
# (as a connection that cannot be made), so the page keeps trying, backing off.
REFUSED_SOCKETS = """
(() => {
  const Real = window.WebSocket;
  window.WebSocket = class extends Real {
    constructor(url, protocols) {
      super(url, protocols);
      if (sessionStorage.getItem("refuse-sockets")) this.close();
    }
  };
})();
"""


@pytest.mark.parametrize("size", ["browser", "phone"])
def test_a_message_written_before_the_socket_opens_is_sent_when_it_does(
    size: str, request: pytest.FixtureRequest
) -> None:
    browser: Browser = request.getfixturevalue(size)
    page = browser.page
    first_answered(browser, REFUSED_SOCKETS)

    page.evaluate("sessionStorage.setItem('refuse-sockets', '1')")
    page.reload()
    page.wait_for_selector("#connection[data-state='reconnecting']", timeout=LIVE_TIMEOUT)
    page.fill("#composer-text", "And the capital of Spain?")
    if size == "phone":  # tapped: Send works while the socket is not open
        assert page.locator("#composer-send").get_attribute("title")
        page.click("#composer-send")
    else:
        page.press("#composer-text", "Enter")  # the socket is not open: the message waits
    page.locator(".msg-user .msg-body", has_text="Spain").first.wait_for()
    assert page.locator("#composer-text").input_value() == ""
    assert page.locator("#messages .msg-error").count() == 0
    screenshot(browser, f"session-message-waiting-{size}.png")

    page.evaluate("sessionStorage.removeItem('refuse-sockets')")  # the next try connects
    page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    wait_for_answer(browser, "Madrid")
    assert page.locator(".msg-user .msg-body", has_text="Spain").count() == 1  # sent once
    assert page.locator("#messages .msg-error").count() == 0
    browser.console.assert_clean()


def test_the_chat_opens_on_its_latest_messages_and_pages_older_ones_on_scroll_up(
    browser: Browser,
) -> None:
    """A long chat comes with a screen of its latest messages; scrolling up brings the older
    ones page by page, each once, in order, until the first."""
    from tests.agentdash.dashboard.browser.harness import session_generate

    made = session_generate(browser.server, "events", "--count", "160", "--owner", "alice")
    turns = made["turns"]
    browser.log_in("alice")
    page = browser.page
    browser.goto(made["path"])
    page.locator("#messages .msg-agent", has_text=f"(turn {turns})").wait_for(timeout=LIVE_TIMEOUT)

    def shown() -> list[int]:
        texts = page.locator("#messages .msg-agent .msg-body.md").all_inner_texts()
        return [int(n) for text in texts for n in re.findall(r"\(turn (\d+)\)", text)]

    first = shown()
    assert first[-1] == turns and 1 not in first
    for _ in range(20):
        if 1 in shown():
            break
        count = page.locator("#messages .msg-agent").count()
        page.eval_on_selector("#messages", "(list) => { list.scrollTop = 0; }")
        page.wait_for_function(
            """(count) => {
              const list = document.querySelector("#messages");
              const older = list.querySelector(".msg-older");
              return list.querySelectorAll(".msg-agent").length > count || !older || older.hidden;
            }""",
            arg=count,
            timeout=LIVE_TIMEOUT,
            polling=POLL_MS,
        )  # an older page drawn, or nothing older to load
    found = shown()
    assert found == list(range(1, turns + 1)), found
    assert page.locator("#messages .msg-older").count() == 1
    assert page.locator("#messages .msg-older").is_hidden()  # nothing older to load
    browser.console.assert_clean()
