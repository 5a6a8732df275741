"""The Monitor in a real browser (see conftest.py): each chart read against the generated set it
was drawn from, bucket by bucket — the bars (runs by outcome, tokens, cost, tool calls and
errors, guardrail decisions, confirmations by answer), the lines (run duration, model and
tool latency, time to first token, waits) — and the table beside the charts; a bar of failed
runs drills down to exactly its sessions, a bar of tool errors to its session and its
timeline's failed calls; both themes keep the contrast and draw the parts in their own
colours; a phone's page does not scroll sideways. ``AGENTDASH_SCREENSHOTS=<dir>`` saves
screenshots there.

The set is mona's — a user of this module's own —, on 2026-11-20 between 09:00 and 11:00 UTC
(no other test writes there), made in the server's database through the real write paths
(runs, and spans through the span store: its rollups are what the page reads).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from agentdash.spans.rollups import bin_seconds, duration_bin
from tests.agentdash.dashboard.browser.harness import Browser, Console, LiveServer, screenshot
from tests.agentdash.dashboard.browser.test_mobile_layout import assert_fits
from tests.agentdash.dashboard.browser.test_themes import choose_theme, contrast_failures
from tests.agentdash.live_harness import manage

pytestmark = [pytest.mark.browser, pytest.mark.slow]

AGENT = "monitor_probe"
RANGE = "from=2026-11-20T09:00:00%2B00:00&to=2026-11-20T11:00:00%2B00:00"
PAGE = f"/monitor/?{RANGE}&agent={AGENT}"

# (minute after 09:00, status, seconds) of each run; each in a session of its own.
RUNS = [(5, "succeeded", 10), (7, "succeeded", 12), (16, "failed", 3), (18, "failed", 4),
        (31, "succeeded", 8), (47, "cancelled", 2), (62, "succeeded", 20), (63, "failed", 5),
        (95, "succeeded", 9)]  # fmt: skip
# (minute, kind, seconds, tokens in, tokens out, failed) of each call, in the run's session
# of the same order.
CALLS = [(5, "model", 1.0, 100, 10, False), (6, "tool", 0.2, 0, 0, False),
         (16, "model", 2.0, 200, 20, False), (17, "tool", 0.3, 0, 0, True),
         (31, "model", 4.0, 400, 40, False), (32, "tool", 0.1, 0, 0, False),
         (62, "model", 0.5, 50, 5, False), (64, "tool", 1.5, 0, 0, True),
         (95, "model", 3.0, 300, 30, False)]  # fmt: skip
# (minute, guardrail, decision) of each guardrail's decision, in the first session.
DECISIONS = [(6, "pii", "redacted"), (8, "pii", "redacted"), (33, "refunds", "blocked"),
             (34, "budget", "limit")]  # fmt: skip
# (minute, outcome, seconds waited) of each run's wait for a person, in the run's session of
# the same order.
WAITS = [(5, "approve", 40), (7, "deny", 300), (16, "expired", 900), (31, "approve", 5),
         (62, "", None)]  # fmt: skip
FIRST_TOKEN = 0.25  # of a model call's duration: its time to the first token
PRICE = (2, 8)  # gemini-probe's $ per million tokens in and out

MAKE = """
from datetime import UTC, datetime, timedelta
from django.contrib.auth.models import User
from agentdash.agent_sessions.services import session_create, session_first_message_record
from agentdash.runs.models import Run
from agentdash.spans.services import span_upsert

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
mona = User.objects.create_user("mona", password={password!r})
ids = []
for n, (minute, status, seconds) in enumerate({runs!r}):
    session = session_create(app_name={agent!r}, user_id=str(mona.pk), owner=mona)
    session_first_message_record(session_id=session.id, text=f"probe {{n}} ({{status}})")
    at = T0 + timedelta(minutes=minute)
    run = Run.objects.create(session=session, agent_name={agent!r}, status=status, message={{}},
                             invocation_id=f"e-probe-{{n}}", started_at=at,
                             finished_at=at + timedelta(seconds=seconds))
    Run.objects.filter(pk=run.pk).update(created_at=at)
    ids.append(session.id)
for n, (minute, kind, seconds, t_in, t_out, failed) in enumerate({calls!r}):
    start = T0 + timedelta(minutes=minute)
    attributes = {{"agentdash.span.kind": kind}}
    if kind == "model":
        attributes.update({{"gen_ai.request.model": "gemini-probe",
                           "gen_ai.usage.input_tokens": t_in,
                           "gen_ai.usage.output_tokens": t_out,
                           "gen_ai.response.time_to_first_token": seconds * {first!r}}})
    else:
        attributes["gen_ai.tool.name"] = "probe_tool"
    span_upsert(trace_id=f"{{0xbeef + n:032x}}", span_id=f"{{n + 1:016x}}", name=kind,
                start_time=int(start.timestamp() * 1e9),
                end_time=int((start + timedelta(seconds=seconds)).timestamp() * 1e9),
                session_id=ids[n], status="error" if failed else "ok", attributes=attributes)
for n, (minute, guardrail, decision) in enumerate({decisions!r}):
    start = T0 + timedelta(minutes=minute)
    span_upsert(trace_id=f"{{0xd0 + n:032x}}", span_id=f"{{n + 1:016x}}", name=guardrail,
                start_time=int(start.timestamp() * 1e9),
                end_time=int(start.timestamp() * 1e9) + 1000, session_id=ids[0],
                attributes={{"agentdash.span.kind": "callback",
                             "agentdash.guardrail.name": guardrail,
                             "agentdash.guardrail.decision": decision}})
from datetime import date
from decimal import Decimal
from agentdash.spans.prices import model_price_set
model_price_set(model="gemini-probe", input_per_mtok=Decimal({price_in!r}),
                output_per_mtok=Decimal({price_out!r}), as_of=date(2026, 1, 1),
                source="monitor tests", actor=mona)
from agentdash.runs.models import Wait
for n, (minute, outcome, waited) in enumerate({waits!r}):
    asked = T0 + timedelta(minutes=minute)
    Wait.objects.create(session_id=ids[n], run=Run.objects.get(session_id=ids[n]),
                        request_id=f"adk-probe-{{n}}", kind="confirmation", tool="probe_tool",
                        asked_at=asked, outcome=outcome,
                        answered_at=asked + timedelta(seconds=waited) if waited else None)
open({out!r}, "w").write(json.dumps(ids))
"""


@pytest.fixture(scope="module")
def probe_sessions(
    agentdash_server: LiveServer, tmp_path_factory: pytest.TempPathFactory
) -> list[str]:
    """mona's sessions, one per run of ``RUNS`` (in order), with ``CALLS`` in them."""
    out = tmp_path_factory.mktemp("monitor") / "sessions.json"
    code = "import json\n" + MAKE.format(
        password=agentdash_server.password,
        runs=RUNS,
        calls=CALLS,
        agent=AGENT,
        out=str(out),
        decisions=DECISIONS,
        waits=WAITS,
        first=FIRST_TOKEN,
        price_in=str(PRICE[0]),
        price_out=str(PRICE[1]),
    )
    manage(agentdash_server.env, "shell", "-c", code)
    found: list[str] = json.loads(out.read_text())
    return found


def bars(browser: Browser, chart: str) -> list[dict[str, Any]]:
    """Each bar of a chart: its part, its value and its title (bucket and value)."""
    found: list[dict[str, Any]] = browser.page.locator(
        f"figure[data-chart={chart}] rect.bar"
    ).evaluate_all(
        """rects => rects.map((r) => ({
            part: [...r.classList].find((c) => c.startsWith("part-")).slice(5),
            value: Number(r.dataset.value),
            title: r.querySelector("title").textContent,
            fill: getComputedStyle(r).fill,
        }))"""
    )
    return found


def line_values(browser: Browser, chart: str, name: str) -> dict[str, float]:
    """``"09:05": value`` of one line of a chart of lines (read from its columns' titles)."""
    titles: list[str] = browser.page.locator(
        f"figure[data-chart={chart}] rect.hover-column title"
    ).evaluate_all("titles => titles.map((t) => t.textContent)")
    found = {}
    for title in titles:
        for part in title[18:].split(", "):
            key, value = part.split()[:2]
            if key == name:
                found[title[11:16]] = float(value.removesuffix("s"))
    return found


def by_bucket(found: list[dict[str, Any]], part: str) -> dict[str, int]:
    """``"09:05": value`` of a part's bars (the bucket read from the bar's own title)."""
    return {b["title"][11:16]: b["value"] for b in found if b["part"] == part}


def bucket(minute: int) -> str:
    """The 5-minute bucket a minute after 09:00 falls in, as the titles say it."""
    start = minute - minute % 5
    return f"{9 + start // 60:02d}:{start % 60:02d}"


def expected(rows: list[tuple[Any, ...]], keep: Any, value: Any) -> dict[str, int]:
    found: dict[str, int] = {}
    for row in rows:
        if keep(row):
            found[bucket(row[0])] = found.get(bucket(row[0]), 0) + value(row)
    return found


def test_each_chart_shows_the_numbers_it_was_made_from(
    browser: Browser, probe_sessions: list[str]
) -> None:
    browser.log_in("operator")
    browser.goto(PAGE)
    browser.page.wait_for_selector("figure[data-chart=runs] rect.bar")
    runs = bars(browser, "runs")
    for status in ("succeeded", "failed", "cancelled"):
        assert by_bucket(runs, status) == expected(RUNS, lambda r, s=status: r[1] == s,
                                                   lambda r: 1), status  # fmt: skip
    tokens = bars(browser, "tokens")
    assert by_bucket(tokens, "in") == expected(CALLS, lambda c: c[1] == "model", lambda c: c[3])
    assert by_bucket(tokens, "out") == expected(CALLS, lambda c: c[1] == "model", lambda c: c[4])
    tools = bars(browser, "tools")
    assert by_bucket(tools, "errors") == expected(CALLS, lambda c: c[1] == "tool" and c[5],
                                                  lambda c: 1)  # fmt: skip
    assert by_bucket(tools, "ok") == expected(CALLS, lambda c: c[1] == "tool" and not c[5],
                                              lambda c: 1)  # fmt: skip
    decided = bars(browser, "decisions")
    for decision in ("redacted", "blocked", "limit"):
        assert by_bucket(decided, decision) == expected(
            DECISIONS, lambda d, w=decision: d[2] == w, lambda d: 1
        ), decision
    guardrails = browser.page.locator("table.monitor-guardrails tbody tr").all_inner_texts()
    assert [" ".join(r.split()) for r in guardrails] == ["pii redacted 2", "budget limit 1",
                                                         "refunds blocked 1"]  # fmt: skip
    # Latency: each bucket's p50/p95/p99 (one call each: all three its duration's bin).
    columns = browser.page.locator("figure[data-chart=model] rect.hover-column title")
    titles: list[str] = columns.evaluate_all("titles => titles.map((t) => t.textContent)")
    latency = {t[11:16]: t[18:] for t in titles}
    wanted = {bucket(c[0]): bin_seconds(duration_bin(c[2])) for c in CALLS if c[1] == "model"}
    assert {k: float(v.split(",")[0].split()[1]) for k, v in latency.items()} == pytest.approx(
        wanted
    )
    assert browser.page.locator("figure[data-chart=model] circle.dot").count() == 3 * len(wanted)
    first = {bucket(c[0]): bin_seconds(duration_bin(c[2] * FIRST_TOKEN))
             for c in CALLS if c[1] == "model"}  # fmt: skip
    # One run a bucket but at 09:05 (two: p50 the shorter) — runs are exact, not binned.
    runs_p50: dict[str, float] = {}
    for minute, _, seconds in RUNS:
        runs_p50[bucket(minute)] = min(seconds, runs_p50.get(bucket(minute), seconds))
    assert line_values(browser, "run_seconds", "p50") == runs_p50
    tools = {bucket(c[0]): round(bin_seconds(duration_bin(c[2])), 6)  # as the API rounds
             for c in CALLS if c[1] == "tool"}  # fmt: skip
    assert line_values(browser, "tool_seconds", "p50") == tools
    cost = bars(browser, "cost")
    assert {b["title"][11:16]: b["value"] for b in cost} == pytest.approx(
        expected(
            CALLS, lambda c: c[1] == "model", lambda c: (c[3] * PRICE[0] + c[4] * PRICE[1]) / 1e6
        )
    )
    assert line_values(browser, "first_token", "p50") == pytest.approx(first)
    # Confirmations by answer, and how long each bucket's waited (one wait each: p50 is it).
    answered = bars(browser, "confirmations")
    for outcome in ("approve", "deny", "expired"):
        assert by_bucket(answered, outcome) == expected(WAITS, lambda w, o=outcome: w[1] == o,
                                                        lambda w: 1), outcome  # fmt: skip
    assert by_bucket(answered, "waiting") == {bucket(62): 1}
    waited: dict[str, list[int]] = {}
    for minute, _, seconds in WAITS:
        if seconds:
            waited.setdefault(bucket(minute), []).append(seconds)
    # p50 by nearest rank: the lower of two.
    assert line_values(browser, "waits", "p50") == {k: min(v) for k, v in waited.items()}
    # The totals and the table beside the charts say the same numbers.
    assert browser.page.locator("[data-stat=runs]").inner_text() == str(len(RUNS))
    assert browser.page.locator("[data-stat=model_calls]").inner_text() == "5"
    assert browser.page.locator("[data-stat=tool_calls]").inner_text() == "4"
    rows = browser.page.locator("table.monitor-series tbody tr")
    assert rows.count() == len({bucket(m) for m, *_ in RUNS} | {bucket(c[0]) for c in CALLS})
    browser.console.assert_clean()


def test_a_bar_of_failed_runs_drills_down_to_exactly_its_sessions(
    browser: Browser, probe_sessions: list[str]
) -> None:
    browser.log_in("operator")
    browser.goto(PAGE)
    failed = browser.page.locator("figure[data-chart=runs] a.bar-link:has(rect.part-failed)")
    assert failed.count() == 2  # 09:15 (two runs) and 10:00 (one)
    with browser.page.expect_navigation():
        failed.first.click()
    ids = browser.page.locator("tr.session-row").evaluate_all(
        "rows => rows.map((r) => r.dataset.sessionId)"
    )
    wanted = [probe_sessions[n] for n, r in enumerate(RUNS) if r[1] == "failed" and r[0] < 20]
    assert sorted(ids) == sorted(wanted)
    browser.console.assert_clean()


def test_a_bar_of_tool_errors_drills_down_to_its_sessions_and_their_failed_calls(
    browser: Browser, probe_sessions: list[str]
) -> None:
    browser.log_in("operator")
    browser.goto(PAGE)
    page = browser.page
    errors = page.locator("figure[data-chart=tools] a.bar-link:has(rect.part-errors)")
    assert errors.count() == 2  # 09:15 and 10:00
    with page.expect_navigation():
        errors.first.click()
    assert "with a tool call that failed from" in page.locator(".filter-window").inner_text()
    rows = page.locator("tr.session-row")
    ids = rows.evaluate_all("rows => rows.map((r) => r.dataset.sessionId)")
    assert ids == [probe_sessions[3]]  # the failed tool call at 09:17 is in the fourth run's
    with page.expect_navigation():
        rows.first.locator("a.session-title").click()
    # The session's timeline opens with its find bar on the failed tool calls.
    assert page.locator("#find-kind").input_value() == "tool"
    assert page.locator("#find-status").input_value() == "error"
    page.locator("#find-count", has_text="1 match").wait_for()
    # …of those that started in the bar's five minutes; without the window, as many.
    assert page.locator("#find-window").is_visible()
    page.locator("#find-window button").click()
    assert page.locator("#find-window").is_hidden()
    page.locator("#find-count", has_text="1 match").wait_for()
    browser.console.assert_clean()


def test_a_reader_abroad_asks_for_a_range_in_their_own_time(
    abroad: Browser, probe_sessions: list[str]
) -> None:
    abroad.log_in("operator")
    abroad.goto(f"/monitor/?agent={AGENT}")
    page = abroad.page
    assert page.locator("input[name=from]").is_hidden()  # a named range: no From and To
    page.select_option("#monitor-range", "custom")
    page.fill("input[name=from]", "2026-11-20T14:30")  # Kolkata: UTC+05:30
    page.fill("input[name=to]", "2026-11-20T16:30")
    with page.expect_navigation():
        page.click(".monitor-form button[type=submit]")
    assert re.search(r"tz=Asia%2F(Kolkata|Calcutta)&", page.url)  # Chromium: the old name
    assert page.locator("[data-stat=runs]").inner_text() == str(len(RUNS))
    assert page.locator("input[name=from]").input_value() == "2026-11-20T14:30"
    page.select_option("#monitor-range", "1h")  # back to a named range: From/To not sent
    with page.expect_navigation():
        page.click(".monitor-form button[type=submit]")
    assert "from=" not in page.url and page.locator("[data-stat=runs]").inner_text() == "0"
    abroad.console.assert_clean()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_both_themes_keep_the_contrast_and_colour_the_parts(
    browser: Browser, probe_sessions: list[str], theme: str
) -> None:
    choose_theme(browser, theme)
    browser.log_in("operator")
    browser.goto(PAGE)
    browser.page.wait_for_selector("figure[data-chart=runs] rect.bar")
    assert contrast_failures(browser, f"monitor ({theme})") == []
    fills = {b["part"]: b["fill"] for b in bars(browser, "runs")}
    assert len({fills["succeeded"], fills["failed"], fills["cancelled"]}) == 3, fills
    screenshot(browser, f"monitor-{theme}.png")


def test_a_phone_reads_the_monitor_without_scrolling_sideways(
    phone: Browser, probe_sessions: list[str]
) -> None:
    phone.log_in("operator")
    phone.goto(PAGE)
    phone.page.wait_for_selector("figure[data-chart=runs] rect.bar")
    assert_fits(phone, "the Monitor on a phone")
    box = phone.page.locator("figure[data-chart=runs] svg").bounding_box()
    assert box is not None and 300 < box["width"] <= 390
    screenshot(phone, "monitor-phone.png")
    phone.console.assert_clean()


def test_a_range_that_ends_now_grows_while_a_run_ends(
    browser: Browser, probe_sessions: list[str]
) -> None:
    browser.log_in("operator")
    browser.goto("/monitor/?range=1h&agent=capital_agent")
    page = browser.page
    page.locator("#monitor-live[data-state=live]").wait_for()
    before = int(page.locator("[data-stat=runs]").inner_text())
    bars_before = sum(b["value"] for b in bars(browser, "runs"))
    assert bars_before == before
    # The same operator chats in another tab: the Monitor, never reloaded, counts the run.
    chat = Browser(page=page.context.new_page(), console=Console(), server=browser.server)
    chat.new_chat("capital_agent", first="What is the capital of France?")
    chat.page.locator(".msg-agent .msg-body.md", has_text="Paris").first.wait_for(timeout=30_000)
    page.locator("[data-stat=runs]", has_text=str(before + 1)).wait_for(timeout=30_000)
    page.wait_for_function(
        """(n) => [...document.querySelectorAll("figure[data-chart=runs] rect.bar")]
            .reduce((sum, r) => sum + Number(r.dataset.value), 0) === n""",
        arg=before + 1,
    )
    assert page.locator("[data-stat=model_calls]").inner_text() != "0"
    # The totals' notes and the tables beside the charts are drawn again too: once every
    # span of the run has ended (stored), what the live page says becomes what the same page
    # says when loaded afresh (the server's drawing).
    chat.page.locator("#span-tree .span[data-state='running']").first.wait_for(
        state="detached", timeout=30_000
    )
    fresh = Browser(page=page.context.new_page(), console=Console(), server=browser.server)
    fresh.goto("/monitor/?range=1h&agent=capital_agent")
    expected = numbers(fresh.page)
    page.wait_for_function(
        f"(expected) => JSON.stringify(({NUMBERS})()) === JSON.stringify(expected)",
        arg=expected, timeout=30_000,
    )  # fmt: skip
    live_numbers = numbers(page)
    assert live_numbers == expected
    assert live_numbers["models"]  # the model the run called, with its calls
    assert str(before + 1) in live_numbers["totals"]
    browser.console.assert_clean()


NUMBERS = """() => {
    const text = (n) => n.textContent.replace(/\\s+/g, " ").trim();
    const found = {totals: text(document.querySelector(".monitor-totals"))};
    for (const body of document.querySelectorAll("tbody[data-numbers]")) {
        const box = document.querySelector(`[data-table="${body.dataset.numbers}"]`);
        found[body.dataset.numbers] = box && box.hidden ? null
            : [...body.rows].map((r) => [...r.cells].map(text));
    }
    return found;
}"""
"""The Monitor's numbers as text: the totals' cards, and each table's rows (``null`` for a
table hidden for want of rows)."""


def numbers(page: Any) -> dict[str, Any]:
    found: dict[str, Any] = page.evaluate(NUMBERS)
    return found


def test_a_custom_range_is_not_live(browser: Browser, probe_sessions: list[str]) -> None:
    browser.log_in("operator")
    browser.goto(PAGE)
    assert browser.page.locator("#monitor-live").count() == 0
