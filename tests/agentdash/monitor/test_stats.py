"""The Monitor's numbers (``/monitor/stats.json``, ``manage.py stats``) read against a generated
set with known counts: runs by status, the error rate, latency percentiles, model calls and
tokens, tool calls and errors — in total and bucket by bucket, for what each person may see,
narrowed by each filter; bad ranges and filters get a 400 naming the field."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from agentdash.agent_sessions.models import AgentSession
from agentdash.runs.models import Run
from agentdash.spans.rollups import bin_seconds, duration_bin
from agentdash.spans.services import span_upsert
from tests.agentdash.stored import session_of

pytestmark = [pytest.mark.django_db, pytest.mark.database]  # JSON lookups: PostgreSQL too

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
RANGE = {"from": "2026-11-20T09:00:00+00:00", "to": "2026-11-20T11:00:00+00:00"}


def ns(moment: datetime) -> int:
    return int(moment.timestamp() * 1e9)


def run(session: AgentSession, n: int, status: str, minute: int, seconds: float) -> None:
    at = T0 + timedelta(minutes=minute)
    made = Run.objects.create(
        session=session, agent_name=session.app_name, invocation_id=f"e-{session.pk}-{n}",
        status=status, message={}, started_at=at, finished_at=at + timedelta(seconds=seconds),
    )  # fmt: skip
    Run.objects.filter(pk=made.pk).update(created_at=at)


def step(session: AgentSession, n: int, kind: str, minute: int, seconds: float,
         **attributes: Any) -> None:  # fmt: skip
    start = T0 + timedelta(minutes=minute)
    span_upsert(
        trace_id=f"{n:032x}", span_id=f"{n:016x}", name=f"{kind} {n}", start_time=ns(start),
        end_time=ns(start + timedelta(seconds=seconds)), session_id=session.pk,
        status=attributes.pop("status", "ok"),
        attributes={"agentdash.span.kind": kind, **attributes},
    )  # fmt: skip


@pytest.fixture
def generated(alice: User, bob: User) -> dict[str, AgentSession]:
    """alice: 4 runs of capital_agent (2 succeeded, 1 failed, 1 cancelled) at 09:05–09:35,
    3 model calls (1 s, 2 s, 4 s; 10+20+30 in, 1+2+3 out), 2 tool calls (one failed);
    bob: 1 failed run of support_agent at 10:10, 1 tool call; an ingested session of alice's:
    1 succeeded run."""
    mine = session_of(alice, "s-alice", "capital_agent")
    theirs = session_of(bob, "s-bob", "support_agent")
    outside = session_of(alice, "otlp-" + "a" * 40, "weather-app")
    for n, (status, minute, seconds) in enumerate(
        [("succeeded", 5, 10), ("succeeded", 15, 20), ("failed", 25, 30), ("cancelled", 35, 5)]
    ):
        run(mine, n, status, minute, seconds)
    run(theirs, 0, "failed", 70, 40)
    run(outside, 0, "succeeded", 40, 1)
    usage = {"gen_ai.request.model": "gemini-x"}
    for n, (minute, seconds, tokens_in, tokens_out) in enumerate(
        [(6, 1, 10, 1), (16, 2, 20, 2), (26, 4, 30, 3)], start=1
    ):
        tokens = {"gen_ai.usage.input_tokens": tokens_in, "gen_ai.usage.output_tokens": tokens_out}
        step(mine, n, "model", minute, seconds, **usage, **tokens)
    step(mine, 10, "tool", 7, 0.5, **{"gen_ai.tool.name": "get_capital"})
    step(mine, 11, "tool", 27, 0.25, status="error", **{"gen_ai.tool.name": "get_capital"})
    step(theirs, 20, "tool", 71, 1, **{"gen_ai.tool.name": "lookup_order"})
    return {"mine": mine, "theirs": theirs, "outside": outside}


def stats_of(user: User, **params: str) -> Any:
    client = Client()
    client.force_login(user)
    answer = client.get("/monitor/stats.json", {**RANGE, **params})
    assert answer.status_code == 200, answer.content
    return answer.json()


def test_an_operator_reads_every_sessions_numbers(generated: Any, operator_user: User) -> None:
    found = stats_of(operator_user)
    totals = found["totals"]
    assert totals["runs"] == 6
    assert totals["runs_by_status"] == {"succeeded": 3, "failed": 2, "cancelled": 1}
    assert totals["error_rate"] == round(2 / 6, 4)
    assert (totals["model_calls"], totals["tokens_in"], totals["tokens_out"]) == (3, 60, 6)
    # Percentiles of calls are read from the rollups' duration bins: each is its bin's middle,
    # within 12.3 % of the exact 2 s and 4 s.
    binned = {name: round(bin_seconds(duration_bin(s)), 6) for name, s in
              (("p50", 2.0), ("p95", 4.0), ("p99", 4.0))}  # fmt: skip
    assert totals["model_seconds"] == binned
    assert all(abs(v - e) / e < 0.1225 for v, e in zip(binned.values(), (2, 4, 4), strict=True))
    assert totals["cost_usd"] == 0.0 and totals["unpriced_calls"] == 3  # gemini-x has no price
    assert (totals["tool_calls"], totals["tool_errors"]) == (3, 1)
    assert found["tools"] == [
        {"name": "get_capital", "calls": 2, "errors": 1, "tokens_in": 0, "tokens_out": 0},
        {"name": "lookup_order", "calls": 1, "errors": 0, "tokens_in": 0, "tokens_out": 0},
    ]
    assert found["models"] == [{"name": "gemini-x", "calls": 3, "errors": 0, "tokens_in": 60,
                                "tokens_out": 6, "cost_usd": None}]  # fmt: skip
    # Two hours in buckets of 5 min: every run and call in the bucket of its start.
    series = found["series"]
    assert found["range"]["step_s"] == 300 and len(series) == 24
    assert sum(b["runs"] for b in series) == 6
    assert series[1]["runs_by_status"] == {"succeeded": 1} and series[1]["model_calls"] == 1
    assert series[5]["tool_errors"] == 1 and series[14]["runs_by_status"] == {"failed": 1}


def test_a_person_reads_only_their_own_sessions(generated: Any, alice: User) -> None:
    totals = stats_of(alice)["totals"]
    assert totals["runs"] == 5 and totals["tool_calls"] == 2  # bob's are not hers
    assert totals["run_seconds"] == {"p50": 10.0, "p95": 30.0, "p99": 30.0}


@pytest.mark.parametrize(
    ("params", "runs", "tool_calls"),
    [
        ({"agent": "capital_agent"}, 4, 2),
        ({"source": "ingested"}, 1, 0),
        ({"source": "local"}, 5, 3),
        ({"status": "failed"}, 2, 3),
        ({"tool": "lookup_order"}, 6, 1),
        ({"owner": "bob"}, 1, 1),
    ],
)
def test_each_filter_narrows_the_numbers(
    generated: Any, operator_user: User, params: dict[str, str], runs: int, tool_calls: int
) -> None:
    totals = stats_of(operator_user, **params)["totals"]
    assert (totals["runs"], totals["tool_calls"]) == (runs, tool_calls)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"from": "2026-11-20T11:00:00+00:00", "to": "2026-11-20T09:00:00+00:00"}, "to"),
        ({"from": "1900-01-01T00:00:00+00:00", "to": "1900-01-02T00:00:00+00:00"}, "from"),
        ({"from": "2025-01-01T00:00:00+00:00", "to": "2026-11-20T00:00:00+00:00"}, "from"),
        ({"from": "2026-11-20T09:00:00", "to": "2026-11-20T10:00:00"}, "from"),
        ({"from": "yesterday", "to": "today"}, "from"),
        ({"range": "1y"}, "range"),
        ({"status": "sleeping"}, "status"),
        ({"source": "mars"}, "source"),
        ({"colour": "red"}, "filters"),
        ({"agent": "x" * 300}, "agent"),
        ({"from": "2026-11-20T09:00", "to": "2026-11-20T10:00", "tz": "Mars/Olympus"}, "tz"),
        ({"from": "2026-11-20T09:00", "to": "2026-11-20T10:00", "tz": "../../etc/passwd"}, "tz"),
        ({"from": "2026-11-20T09:00", "to": "2026-11-20T10:00", "tz": "x" * 100}, "tz"),
    ],
)
def test_bad_ranges_and_filters_are_a_400_naming_the_field(
    alice: User, params: dict[str, str], field: str
) -> None:
    client = Client()
    client.force_login(alice)
    answer = client.get("/monitor/stats.json", params)
    assert answer.status_code == 400, answer.content
    assert field in answer.json()["error"]["fields"]


def test_signed_out_readers_are_sent_to_log_in() -> None:
    answer = Client().get("/monitor/stats.json")
    assert answer.status_code == 302 and "/login/" in answer["Location"]


def test_the_command_gives_the_operators_numbers(generated: Any, operator_user: User) -> None:
    out = io.StringIO()
    call_command("stats", "--from", RANGE["from"], "--to", RANGE["to"], "--json", stdout=out)
    assert json.loads(out.getvalue()) == stats_of(operator_user)
    table = io.StringIO()
    call_command("stats", "--from", RANGE["from"], "--to", RANGE["to"], stdout=table)
    assert "runs  6" in table.getvalue() and "get_capital: 2 calls, 1 errors" in table.getvalue()


def test_the_page_shows_the_numbers_beside_its_charts(generated: Any, operator_user: User) -> None:
    client = Client()
    client.force_login(operator_user)
    page = client.get("/monitor/", RANGE)
    assert page.status_code == 200
    html = page.content.decode()
    assert '<span class="stat-value" data-stat="runs">6</span>' in html
    assert '<span class="stat-value" data-stat="tool_calls">3</span>' in html
    assert "<code>get_capital</code>" in html and 'data-chart="runs"' in html
    data = json.loads(
        html.split('id="monitor-data" type="application/json">')[1].split("</script>")[0]
    )
    assert data == stats_of(operator_user)  # the charts' numbers are the API's
    bad = client.get("/monitor/", {"range": "forever"})
    assert bad.status_code == 400 and "range: one of" in bad.content.decode()


def listed(user: User, **params: str) -> set[str]:
    """The sessions the sessions list shows ``user`` with these filters."""
    client = Client()
    client.force_login(user)
    page = client.get("/", params)
    assert page.status_code == 200
    return {
        s
        for s in ("s-alice", "s-bob", "otlp-" + "a" * 40)
        if f'data-session-id="{s}"' in page.content.decode()
    }


def test_a_bar_drills_down_to_exactly_its_sessions(generated: Any, operator_user: User) -> None:
    """The runs chart's bars lead to the sessions list narrowed to their bucket's window (and
    outcome): the failed run at 09:25 is alice's; bob's failed at 10:10."""
    window = {"runs_from": "2026-11-20T09:25:00.000Z", "runs_to": "2026-11-20T09:30:00.000Z"}
    assert listed(operator_user, **window, outcome="failed") == {"s-alice"}
    assert listed(operator_user, **window, outcome="succeeded") == set()
    whole = {"runs_from": RANGE["from"], "runs_to": RANGE["to"]}
    assert listed(operator_user, **whole) == {"s-alice", "s-bob", "otlp-" + "a" * 40}
    assert listed(operator_user, **whole, outcome="failed") == {"s-alice", "s-bob"}
    # A window that cannot be is said, and left out.
    assert len(listed(operator_user, runs_from="soon", runs_to="later")) == 3


def test_a_range_without_offsets_is_read_in_the_readers_time_zone(
    generated: Any, operator_user: User
) -> None:
    kolkata = stats_of(operator_user, **{"from": "2026-11-20T14:30", "to": "2026-11-20T16:30",
                                         "tz": "Asia/Kolkata"})  # fmt: skip
    assert kolkata["range"]["from"] == "2026-11-20T09:00:00+00:00"
    assert kolkata["totals"] == stats_of(operator_user)["totals"]


def test_guardrail_decisions_are_counted_by_bucket_and_by_guardrail(
    generated: Any, operator_user: User, alice: User
) -> None:
    mine, theirs = generated["mine"], generated["theirs"]
    for n, (session, minute, guardrail, decision) in enumerate(
        [(mine, 8, "pii", "redacted"), (mine, 9, "pii", "redacted"), (mine, 9, "budget", "limit"),
         (theirs, 72, "refunds", "blocked"), (mine, 26, "pii", "allowed")], start=40
    ):  # fmt: skip
        decided = {"agentdash.guardrail.name": guardrail, "agentdash.guardrail.decision": decision}
        step(session, n, "callback", minute, 0.01, **decided)
    step(mine, 50, "callback", 30, 0.01, **{"agentdash.guardrail.decision": "maybe"})  # unknown
    found = stats_of(operator_user)
    assert found["totals"]["decisions"] == {"redacted": 2, "limit": 1, "blocked": 1, "allowed": 1}
    series = found["series"]
    assert series[1]["decisions"] == {"redacted": 2, "limit": 1}  # 09:05–09:10
    assert series[14]["decisions"] == {"blocked": 1}
    assert found["guardrails"] == [
        {"guardrail": "pii", "decision": "redacted", "count": 2},
        {"guardrail": "budget", "decision": "limit", "count": 1},
        {"guardrail": "pii", "decision": "allowed", "count": 1},
        {"guardrail": "refunds", "decision": "blocked", "count": 1},
    ]
    hers = stats_of(alice)  # bob's refusal is not hers
    assert hers["totals"]["decisions"] == {"redacted": 2, "limit": 1, "allowed": 1}
    assert stats_of(operator_user, agent="support_agent")["totals"]["decisions"] == {"blocked": 1}
