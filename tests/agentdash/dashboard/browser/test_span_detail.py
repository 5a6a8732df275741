"""The span details pane in a real browser, on real chats (see conftest.py): a model call reads
as the conversation the model saw, a tool call shows its arguments and result as JSON with
Copy buttons, a callback says its hook, its outcome and what it returned and replaced; long
values are collapsed, huge ones capped; the raw attributes stay one click away; hostile
values (markup, NUL, lone surrogates, megabytes, deep nesting) stay text.

This module runs its own server: besides the demo agents it offers
:mod:`tests.agentdash.dashboard.browser.hostile_agent`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.agentdash.dashboard.browser.harness import (
    POLL_MS,
    Browser,
    LiveServer,
    details_drawn,
    screenshot,
    server_running,
)
from tests.agentdash.dashboard.browser.hostile_agent import AGENT_NAME, HUGE_CHARS, MARKUP

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LIVE_TIMEOUT = 30_000  # ms: a run on the offline model takes well under a second
SHOWN_CHARS = 100_000  # span_detail_value.js: the most characters one value puts in the page
HOSTILE_AGENTS = (
    "agentdash.demo.capital:root_agent,tests.agentdash.dashboard.browser.hostile_agent:root_agent"
)


@pytest.fixture(scope="module")
def agentdash_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """This module's server: the embedded default, offering the hostile agent too."""
    with server_running(
        tmp_path_factory.mktemp("span-detail-server"),
        env_extra={"AGENTDASH_AGENTS": HOSTILE_AGENTS},
    ) as server:
        yield server


# ── Helpers ────────────────────────────────────────────────────────────────────────────────
def chat(browser: Browser, agent: str, text: str) -> None:
    """Log in as alice, start a chat with ``agent`` by sending ``text``, wait for the answer
    and for every span to end."""
    browser.log_in("alice")
    page = browser.page
    browser.goto("/")
    page.click(f"form.new-chat button[data-agent='{agent}']")
    page.wait_for_selector("#composer-text")
    if page.locator("#new-chat-form").count():  # the first message makes the session
        page.fill("#composer-text", text)
        with page.expect_navigation():
            page.click("#composer-send")
    else:
        page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
        page.fill("#composer-text", text)
        page.press("#composer-text", "Enter")
    page.locator(".msg-agent:not(.streaming) .msg-body.md").first.wait_for(timeout=LIVE_TIMEOUT)
    page.wait_for_selector("#run-status", state="attached")
    page.locator("#span-tree .span[data-state='running']").first.wait_for(
        state="detached", timeout=LIVE_TIMEOUT
    )


def open_span(browser: Browser, selector: str, *, first: bool = False) -> Any:
    """Click the row (the last, or the ``first``) of the spans ``selector`` names; the pane,
    once its view is drawn."""
    page = browser.page
    rows = page.locator(f"#span-tree {selector}")
    row = rows.first if first else rows.last
    span_id = row.get_attribute("data-span-id")
    row.locator(":scope > .span-row").click()
    return details_drawn(browser, span_id, timeout=LIVE_TIMEOUT)


def fact(pane: Any, name: str) -> str:
    return str(pane.locator(f'.facts [data-fact="{name}"] dd').first.inner_text())


def raw_attributes(pane: Any) -> dict[str, str]:
    """The raw attributes table, opened, as key → shown text."""
    section = pane.locator("details.raw-attrs")
    if section.get_attribute("open") is None:
        section.locator("summary").click()
    rows = pane.locator('table[aria-label="attributes"] tr')
    return {
        rows.nth(i).locator("th").inner_text(): rows.nth(i).locator("td pre").inner_text()
        for i in range(rows.count())
    }


def no_markup_ran(browser: Browser) -> None:
    page = browser.page
    assert page.locator("#span-detail img, #span-detail script, #span-detail b").count() == 0
    assert page.evaluate("window.__xss") is None


# ── A model call ───────────────────────────────────────────────────────────────────────────
def test_a_model_call_reads_as_the_conversation_the_model_saw(browser: Browser) -> None:
    chat(browser, "capital_agent", "What is the capital of France?")
    pane = open_span(browser, ".span[data-kind='model']")  # the last: the one that answered

    request = pane.locator("section[aria-label='Request']")
    assert (
        "You answer questions about capital cities"
        in request.locator(".turn[data-role='system']").inner_text()
    )
    turns = request.locator("ol.turns > li.turn")
    assert [turns.nth(i).get_attribute("data-role") for i in range(turns.count())] == [
        "user",
        "model",
        "tool",
    ]
    assert turns.nth(0).inner_text().endswith("What is the capital of France?")
    call = turns.nth(1).locator(".part-call")
    assert call.locator(".part-head code").inner_text() == "get_capital_city"
    assert json.loads(call.locator("pre").inner_text()) == {"country": "France"}
    result = turns.nth(2).locator(".part-result")
    assert result.locator(".part-head code").inner_text() == "get_capital_city"
    assert json.loads(result.locator("pre").inner_text()) == {"result": "Paris"}
    declared = request.locator(".tool-def")
    assert declared.count() == 1
    assert declared.locator(".part-head code").inner_text() == "get_capital_city"

    response = pane.locator("section[aria-label='Response']")
    answer = response.locator("li.turn[data-role='model']").inner_text()
    assert "Paris" in answer and "(checked by after_model)" in answer
    assert "Replaced by the callback add_disclaimer" in response.inner_text()
    assert fact(pane, "finish reason") == "stop"
    pane.evaluate("pane => { pane.scrollTop = 0; }")
    screenshot(browser, "span-detail-model.png")

    # Tokens: the server's usage when it sends one (with cost), else the span's attributes;
    # either way the numbers are the span's.
    raw = raw_attributes(pane)
    assert fact(pane, "input tokens") == raw["gen_ai.usage.input_tokens"]
    assert fact(pane, "output tokens") == raw["gen_ai.usage.output_tokens"]
    # The cost is the server's to say (the span's usage): shown when it is sent, never made up.
    data = browser.page.request.get(span_url(browser, pane)).json()
    costs = pane.locator('.facts [data-fact="cost"]')
    if data.get("usage"):
        assert costs.count() == 1 and costs.inner_text().startswith("cost")
    else:
        assert costs.count() == 0
    browser.console.assert_clean()


def test_the_pane_s_modules_come_when_needed_and_a_failed_fetch_is_said(
    browser: Browser,
) -> None:
    """The details' modules are not part of the page's start (span_detail_lazy.js): a span
    opened while they cannot be fetched says so in the pane; opened again once they can, it
    shows in full."""
    chat(browser, "capital_agent", "What is the capital of Italy?")
    page = browser.page
    path = page.url.removeprefix(browser.server.url)
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url.rsplit("/", 1)[-1]))
    page.route("**/span_detail_model.js", lambda route: route.abort())
    browser.goto(path)
    page.wait_for_selector("#span-tree .span[data-kind='model']")
    row = page.locator("#span-tree .span[data-kind='model']").last
    row.locator(":scope > .span-row").click()
    pane = page.locator("#span-detail")
    pane.locator(".detail-notice.notice-error").wait_for(timeout=LIVE_TIMEOUT)
    assert "could not be loaded" in pane.inner_text()
    assert not pane.is_hidden()
    assert "span_detail.js" in fetched  # asked for, and its import refused

    page.unroute("**/span_detail_model.js")
    page.keyboard.press("Escape")
    assert pane.is_hidden()
    pane = open_span(browser, ".span[data-kind='model']")
    assert pane.locator(".detail-notice.notice-error").count() == 0
    assert "capital of Italy" in pane.locator("section[aria-label='Request']").inner_text()


def span_url(browser: Browser, pane: Any) -> str:
    """The one-span endpoint of the span the pane shows (its ids from the pane's table)."""
    ids = {
        name: pane.locator(
            "table[aria-label='span'] tr",
            has=browser.page.locator("th", has_text=re.compile(f"^{name}$")),
        )
        .locator("td")
        .inner_text()
        for name in ("trace_id", "span_id")
    }
    path = browser.page.url.removeprefix(browser.server.url).split("?")[0]
    return f"{browser.server.url}{path}spans/{ids['trace_id']}/{ids['span_id']}/"


def test_a_long_value_is_collapsed_and_shows_all_on_request(browser: Browser) -> None:
    chat(browser, "capital_agent", "What is the capital of Japan?")
    pane = open_span(browser, ".span[data-kind='model']")
    parameters = pane.locator(".tool-def .value").filter(has_text="Parameters")
    toggle = parameters.locator("button.value-toggle")
    collapsed = parameters.locator("pre").inner_text()
    assert (
        toggle.inner_text().startswith("Show all")
        and toggle.get_attribute("aria-expanded") == "false"
    )
    toggle.focus()
    browser.page.keyboard.press("Enter")
    expanded = parameters.locator("pre").inner_text()
    assert len(expanded) > len(collapsed) and expanded.startswith(collapsed)
    assert json.loads(expanded)["properties"]["country"]["type"] == "string"
    assert toggle.inner_text() == "Show less" and toggle.get_attribute("aria-expanded") == "true"
    assert browser.page.evaluate("document.activeElement.textContent") == "Show less"
    toggle.click()
    assert parameters.locator("pre").inner_text() == collapsed
    browser.console.assert_clean()


def test_a_redraw_keeps_what_the_reader_expanded_and_focused(browser: Browser) -> None:
    """A model call's details are drawn at once from its live version, then again when the
    server's copy (with its usage) arrives: the reader's expanded value and focus survive."""
    chat(browser, "capital_agent", "What is the capital of Canada?")
    page = browser.page
    # A second question on the open page: its spans come over the socket, each with its live
    # version. (The first run may have ended before the page was there: its spans are then
    # the snapshot's summaries, whose details only the server's copy draws.)
    # Once the page says Live: a message sent before is refused as 'Not connected' (the
    # first run may end before the page's socket is open).
    page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    page.fill("#composer-text", "And the capital of Australia?")
    page.press("#composer-text", "Enter")
    page.locator(".msg-agent:not(.streaming) .msg-body.md").nth(1).wait_for(timeout=LIVE_TIMEOUT)
    page.locator("#span-tree .span[data-state='running']").first.wait_for(
        state="detached", timeout=LIVE_TIMEOUT
    )
    held: list[Any] = []
    span_url = re.compile(r"/spans/[0-9a-f]+/[0-9a-f]+/$")
    page.route(span_url, lambda route: held.append(route))
    row = page.locator("#span-tree .span[data-kind='model']").last
    # The pane asks the server for the model call (Playwright delivers the request, then the
    # route, in order: the next call into the page has run the handler that holds it).
    with page.expect_request(span_url, timeout=LIVE_TIMEOUT):
        row.locator(":scope > .span-row").click()
    pane = page.locator("#span-detail")
    parameters = pane.locator(".tool-def .value").filter(has_text="Parameters")
    toggle = parameters.locator("button.value-toggle")
    toggle.focus()
    page.keyboard.press("Enter")  # drawn from the live version; the server's copy is held
    assert toggle.get_attribute("aria-expanded") == "true"
    toggle.evaluate("button => { button.dataset.before = 'yes'; }")
    assert len(held) == 1, "the pane's request for the model call was not held"
    held[0].continue_()
    # Drawn again (a new button), expanded as the reader left it, and focused.
    page.wait_for_function(
        """() => {
          const button = document.querySelector("#span-detail .tool-def button.value-toggle");
          return !!button && !button.dataset.before;
        }""",
        timeout=LIVE_TIMEOUT,
        polling=POLL_MS,
    )
    assert page.evaluate(
        """() => document.activeElement ===
             document.querySelector("#span-detail .tool-def button.value-toggle")"""
    ), "the focus was lost when the details were drawn again"
    assert parameters.locator("button.value-toggle").get_attribute("aria-expanded") == "true"
    browser.console.assert_clean()


# ── A tool call ────────────────────────────────────────────────────────────────────────────
def test_a_tool_call_shows_its_arguments_and_result_with_copy_buttons(browser: Browser) -> None:
    chat(browser, "capital_agent", "What is the capital of Italy?")
    page = browser.page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=browser.server.url)
    pane = open_span(browser, ".span[data-kind='tool']")
    assert fact(pane, "tool") == "get_capital_city"
    # Its status was left unset (OpenTelemetry's default) and is said so, not called "ok".
    assert fact(pane, "status") == "unset (ended without an error)"
    arguments = pane.locator(".value").filter(
        has=page.locator(".value-label", has_text="Arguments")
    )
    result = pane.locator(".value").filter(has=page.locator(".value-label", has_text="Result"))
    assert json.loads(arguments.locator("pre").inner_text()) == {"country": "Italy"}
    assert json.loads(result.locator("pre").inner_text()) == {"result": "Rome"}

    result.locator("button.value-copy").click()
    result.locator(".value-status", has_text="Copied").wait_for()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert json.loads(copied) == {"result": "Rome"}
    assert copied == result.locator("pre").inner_text()
    pane.evaluate("pane => { pane.scrollTop = 0; }")
    screenshot(browser, "span-detail-tool.png")

    # The raw attributes are there, collapsed, and agree.
    section = pane.locator("details.raw-attrs")
    assert section.get_attribute("open") is None
    assert raw_attributes(pane)["gen_ai.tool.name"] == "get_capital_city"
    # Opened once, they stay open for the next span.
    pane = open_span(browser, ".span[data-kind='model']")
    assert pane.locator("details.raw-attrs").get_attribute("open") is not None
    browser.console.assert_clean()


def test_copy_works_without_the_clipboard_api(browser: Browser) -> None:
    """Where the page may not use navigator.clipboard, Copy selects and copies the text with
    the browser's copy command, and still says so."""
    browser.page.add_init_script(
        """window.__clipboard = navigator.clipboard;
           Object.defineProperty(Navigator.prototype, "clipboard", { get: () => undefined });"""
    )
    chat(browser, "capital_agent", "What is the capital of Spain?")
    page = browser.page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=browser.server.url)
    assert page.evaluate("navigator.clipboard === undefined")
    pane = open_span(browser, ".span[data-kind='tool']")
    arguments = pane.locator(".value").filter(
        has=page.locator(".value-label", has_text="Arguments")
    )
    button = arguments.locator("button.value-copy")
    button.click()
    arguments.locator(".value-status", has_text="Copied").wait_for()
    assert json.loads(page.evaluate("window.__clipboard.readText()")) == {"country": "Spain"}
    assert page.evaluate("document.activeElement.classList.contains('value-copy')")
    assert page.locator("textarea.copy-buffer").count() == 0
    browser.console.assert_clean()


# ── A callback ─────────────────────────────────────────────────────────────────────────────
def test_a_callback_says_its_hook_outcome_and_what_it_returned_and_replaced(
    browser: Browser,
) -> None:
    chat(browser, "capital_agent", "What is the capital of Germany?")
    pane = open_span(browser, ".span[data-name='callback add_disclaimer']:has(.outcome-overridden)")
    assert fact(pane, "hook") == "after_model"
    assert fact(pane, "outcome") == "overridden"
    assert fact(pane, "step").startswith("generate_content")
    assert "The model's response was replaced by what the callback returned." in pane.inner_text()
    returned = pane.locator("section[aria-label='Returned'] li.turn[data-role='model']")
    replaced = pane.locator("section[aria-label='Replaced'] li.turn[data-role='model']")
    assert "Berlin" in returned.inner_text() and "(checked by after_model)" in returned.inner_text()
    assert "Berlin" in replaced.inner_text() and "checked by" not in replaced.inner_text()
    pane.evaluate("pane => { pane.scrollTop = 0; }")
    screenshot(browser, "span-detail-callback.png")

    pane = open_span(browser, ".span[data-name='callback block_keyword_guardrail']")
    assert fact(pane, "hook") == "before_model"
    assert fact(pane, "outcome") == "passed"
    assert "Passed: it returned nothing" in pane.inner_text()
    assert pane.locator("section[aria-label='Returned']").count() == 0

    # Esc closes the pane; the focus goes back to the tree's row.
    pane.locator(".detail-head button").focus()
    browser.page.keyboard.press("Escape")
    pane.wait_for(state="hidden")
    assert browser.page.evaluate("document.activeElement.closest('#span-tree') !== null"), (
        "the focus left the tree"
    )
    browser.console.assert_clean()


def test_a_model_call_a_callback_skipped_says_so_on_both_spans(browser: Browser) -> None:
    """The capital agent's guardrail answers any message with BLOCK in it itself: the model
    is never called."""
    chat(browser, "capital_agent", "BLOCK the capital of France")
    pane = open_span(browser, ".span[data-kind='model']")
    assert "Not called: the before_model callback block_keyword_guardrail answered instead." in (
        pane.locator(".detail-notice").first.inner_text()
    )
    response = pane.locator("section[aria-label='Response'] li.turn[data-role='model']")
    assert "it contains 'BLOCK'" in response.inner_text()

    pane = open_span(browser, ".span[data-name='callback block_keyword_guardrail']")
    assert fact(pane, "outcome") == "overridden"
    assert "The model was not called" in pane.locator(".detail-notice").inner_text()
    returned = pane.locator("section[aria-label='Returned'] li.turn[data-role='model']")
    assert "it contains 'BLOCK'" in returned.inner_text()
    assert pane.locator("section[aria-label='Replaced']").count() == 0
    browser.console.assert_clean()


# ── Hostile values ─────────────────────────────────────────────────────────────────────────
def test_hostile_values_stay_text_and_huge_ones_are_capped(browser: Browser) -> None:
    chat(browser, AGENT_NAME, f"hostile lookup of Atlantis {MARKUP}")
    page = browser.page
    pane = open_span(browser, ".span[data-kind='tool']")
    result = pane.locator(".value").filter(has=page.locator(".value-label", has_text="Result"))
    shown = result.locator("pre").inner_text()
    assert "<script>window.__xss=2</script>" in shown  # as text
    assert '"before\\u0000after"' in shown  # NUL: escaped in the JSON, shown as written
    no_markup_ran(browser)

    # The result is nested 200 deep: collapsed, all of it on request, indented.
    result.locator("button.value-toggle").click()
    assert result.locator("pre").inner_text().count('"deeper"') == 200

    # A 3 MB attribute: a few lines, then at most SHOWN_CHARS, and the rest counted.
    raw = pane.locator("details.raw-attrs")
    raw.locator("summary").click()
    huge = pane.locator("tr", has=page.locator("th", has_text=re.compile(r"^hostile\.huge$")))
    collapsed = huge.locator("pre").inner_text()
    assert collapsed.startswith(MARKUP) and len(collapsed) < 1_000
    huge.locator("button.value-toggle").click()
    assert len(huge.locator("pre").evaluate("e => e.textContent")) == SHOWN_CHARS
    assert huge.locator(".value-hidden").inner_text() == (
        f"{HUGE_CHARS - SHOWN_CHARS:,} more characters not shown"
    )
    assert page.evaluate("document.querySelector('#span-detail').textContent.length") < 400_000

    # JSON text nested 50,000 deep is shown as it was recorded, not parsed into a stall.
    nested = pane.locator("tr", has=page.locator("th", has_text=re.compile(r"^hostile\.nested$")))
    assert nested.locator("pre").inner_text().startswith("[[[[")
    no_markup_ran(browser)

    # The first model call: the instruction and the user's words, markup and all, as text.
    pane = open_span(browser, ".span[data-kind='model']", first=True)
    request = pane.locator("section[aria-label='Request']")
    assert MARKUP in request.locator(".turn[data-role='system']").inner_text()
    assert MARKUP in request.locator("li.turn[data-role='user']").first.inner_text()
    no_markup_ran(browser)

    # The second: a request of a megabyte (a callback recorded it) is not read as a
    # conversation, but shown as recorded, capped, with the reason.
    pane = open_span(browser, ".span[data-kind='model']")
    messages = pane.locator("section[aria-label='Request'] .value").filter(
        has=page.locator(".value-label", has_text="Messages")
    )
    assert "too large to read here" in messages.locator(".value-note").inner_text()
    assert pane.locator("section[aria-label='Request'] li.turn").count() == 0
    messages.locator("button.value-toggle").click()
    assert len(messages.locator("pre").evaluate("e => e.textContent")) == SHOWN_CHARS
    assert messages.locator(".value-hidden").inner_text().endswith("(Copy copies all)")
    no_markup_ran(browser)
    browser.console.assert_clean()


def test_the_details_pane_is_resized_by_its_handle_and_keeps_its_size(browser: Browser) -> None:
    """The details were squeezed under the tree (at most 45% of the panel, fixed): the handle
    above them gives them more or less of the panel by mouse and by keyboard, and the size
    holds after a reload."""
    chat(browser, "capital_agent", "What is the capital of Italy?")
    page = browser.page
    open_span(browser, ".span[data-kind='model']")
    detail = page.locator("#span-detail")
    panel = page.locator(".timeline-panel").bounding_box()
    handle = page.locator(".detail-split")
    assert handle.is_visible()
    before = detail.bounding_box()
    assert panel and before
    box = handle.bounding_box()
    assert box
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    target = panel["y"] + panel["height"] * 0.2  # the details take about 80% of the panel
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x, target, steps=8)
    page.mouse.up()
    after = detail.bounding_box()
    assert after and after["height"] > before["height"] + 100
    assert after["height"] > panel["height"] * 0.7
    assert handle.get_attribute("aria-valuenow") in ("80", "81", "79")

    handle.focus()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    smaller = detail.bounding_box()
    assert smaller and smaller["height"] < after["height"] - 30
    kept = handle.get_attribute("aria-valuenow")

    page.reload()
    page.locator("#span-tree .span[data-kind='model']").last.wait_for()
    open_span(browser, ".span[data-kind='model']")
    assert page.locator(".detail-split").get_attribute("aria-valuenow") == kept
    again = page.locator("#span-detail").bounding_box()
    assert again and abs(again["height"] - smaller["height"]) < 2
    page.keyboard.press("Tab")  # away and back: Enter on the handle restores the default
    page.locator(".detail-split").focus()
    page.keyboard.press("Enter")
    assert page.locator(".detail-split").get_attribute("aria-valuenow") == "45"
    browser.console.assert_clean()


# ── A span sent from outside ───────────────────────────────────────────────────────────────
def test_a_span_from_outside_shows_who_sent_it_and_its_links_lead_to_stored_spans(
    browser: Browser,
) -> None:
    """An OTLP export using every field: the agent span's details list its links (the one to a
    stored span opens it, on the same page; the other says it is not stored), and, collapsed,
    the service, scope, resource attributes, flags and trace state it was sent with."""
    from tests.agentdash.ingest.ingest_server import key_create, otlp_send
    from tests.agentdash.ingest.otlp_bodies import every_field_request

    key = key_create(browser.server.env, "alice", "billing")
    otlp_send(browser.server.url, key, every_field_request().SerializeToString())
    browser.log_in("alice")
    page = browser.page
    path = page.locator("a.session-title[href*='/sessions/otlp-']").first.get_attribute("href")
    assert path
    browser.goto(path)
    page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    pane = open_span(browser, ".span[data-span-id='b7ad6b7169203331']")
    links = pane.locator(".detail-links")
    links.locator("li").first.wait_for(timeout=LIVE_TIMEOUT)
    heading = links.locator("h4").text_content() or ""
    assert heading == "Links (2, 6 dropped by the sender)", heading
    assert links.locator("li").nth(1).inner_text().endswith("(not stored here)")
    sender = pane.locator("details.detail-sender")
    assert (sender.locator("summary").text_content() or "") == "Sent by billing · billing.agent"
    sender.locator("summary").click()
    resource = sender.locator('table[aria-label="resource attributes"]')
    assert "worker-7" in resource.inner_text()
    scope = sender.locator('table[aria-label="instrumentation scope"]').inner_text()
    assert "0.9.1" in scope and "schemas/1.27.0" in scope
    span_facts = sender.locator('table[aria-label="span as sent"]').inner_text()
    assert "0x0301 (sampled, remote parent)" in span_facts and "vendor=abc,other=1" in span_facts
    screenshot(browser, "span-detail-outside.png")
    before = page.url
    links.locator("a").first.click()  # the stored one: opens here, the address follows
    details_drawn(browser, "051581bf3cb55c13", timeout=LIVE_TIMEOUT)
    assert page.url != before and "span=051581bf3cb55c13" in page.url
    assert (page.locator("#span-detail h3").text_content() or "") == "ledger write"
    page.go_back()
    details_drawn(browser, "b7ad6b7169203331", timeout=LIVE_TIMEOUT)
    page.set_viewport_size({"width": 390, "height": 844})
    pane.locator(".detail-links").scroll_into_view_if_needed()
    screenshot(browser, "span-detail-outside-phone.png")
    browser.console.assert_clean()


@pytest.mark.parametrize("sender", ["any_agent", "openinference_openai", "traceloop_legacy_openai"])
def test_an_outside_model_call_reads_as_the_conversation_whoever_recorded_it(
    browser: Browser, sender: str
) -> None:
    """A real library's export (tests/agentdash/ingest/fixtures): its first model call shows
    the system instruction, the user's question and the tool call the model made — not
    "(no parts)" — and its tool call the arguments."""
    from pathlib import Path

    from tests.agentdash.ingest.ingest_server import key_create, otlp_send

    fixtures = Path(__file__).parents[2] / "ingest" / "fixtures"
    key = key_create(browser.server.env, "bob", f"weather-{sender}")
    otlp_send(browser.server.url, key, (fixtures / f"{sender}.pb").read_bytes())
    browser.log_in("bob")
    page = browser.page
    path = page.locator("a.session-title[href*='/sessions/otlp-']").first.get_attribute("href")
    assert path
    browser.goto(path)
    page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    pane = open_span(browser, ".span[data-kind='model']", first=True)
    request_view = pane.locator("section[aria-label='Request']")
    assert "(no parts)" not in request_view.inner_text()
    assert "You answer questions about the weather." in request_view.inner_text()
    user = request_view.locator(".turn[data-role='user']").last
    assert user.inner_text().endswith("What is the weather in Paris?")
    response = pane.locator("section[aria-label='Response']")
    assert "get_weather" in response.locator(".part-call").first.inner_text()
    screenshot(browser, f"outside-model-{sender}.png")
    tool = open_span(browser, ".span[data-kind='tool']")
    assert "Paris" in tool.inner_text() and "No arguments recorded" not in tool.inner_text()
    browser.console.assert_clean()
