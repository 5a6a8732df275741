"""The Monitor's numbers (``/monitor/stats.json``, ``manage.py stats``) read against a generated
set with known counts: runs by status, the error rate, latency percentiles, model calls and
tokens, tool calls and errors — in total and bucket by bucket, for what each person may see,
narrowed by each filter; bad ranges and filters get a 400 naming the field."""

from __future__ import annotations

import io
import json
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from agentdash.runs.models import Wait
from agentdash.spans.rollups import bin_seconds, duration_bin
from tests.agentdash.monitor.generated import RANGE, T0, remote_pause, stats_of, step

pytestmark = [pytest.mark.django_db, pytest.mark.database]  # JSON lookups: PostgreSQL too


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


def test_streamed_calls_time_to_first_token_is_read_like_their_latency(
    generated: Any, operator_user: User, alice: User, bob: User
) -> None:
    mine, theirs = generated["mine"], generated["theirs"]
    first = "gen_ai.response.time_to_first_token"
    model = {"gen_ai.request.model": "gemini-x"}
    step(mine, 60, "model", 8, 2, **model, **{first: 0.3})
    step(mine, 61, "model", 9, 3, **model, **{first: 0.6})
    step(mine, 62, "model", 10, 1, **model, **{first: "soon"})  # a sender's nonsense: no time
    step(mine, 63, "model", 11, 1, **model, **{first: -1})
    step(theirs, 64, "model", 72, 5, **model, **{first: 2.5})
    binned = {s: round(bin_seconds(duration_bin(s)), 6) for s in (0.3, 0.6, 2.5)}
    every = stats_of(operator_user)  # from the rollups
    assert every["totals"]["model_calls"] == 8 and every["totals"]["streamed_calls"] == 3
    assert every["totals"]["first_token_seconds"] == {
        "p50": binned[0.6], "p95": binned[2.5], "p99": binned[2.5]}  # fmt: skip
    assert every["series"][1]["first_token_seconds"]["p50"] == binned[0.3]  # 09:05–09:10
    assert every["series"][14]["streamed_calls"] == 1
    assert sum(m["calls"] for m in every["models"]) == 8  # a first token is no call itself
    hers = stats_of(alice)["totals"]  # from her sessions' spans, folded the same way
    assert hers["streamed_calls"] == 2
    assert hers["first_token_seconds"] == {"p50": binned[0.3], "p95": binned[0.6],
                                           "p99": binned[0.6]}  # fmt: skip
    assert stats_of(bob)["totals"]["first_token_seconds"]["p50"] == binned[2.5]
    other = stats_of(operator_user, model="gemini-y")["totals"]
    assert other["streamed_calls"] == 0 and other["first_token_seconds"]["p50"] is None


def test_confirmations_are_counted_by_answer_with_how_long_they_waited(
    generated: Any, operator_user: User, alice: User, bob: User
) -> None:
    """Local runs' waits and a remote app's pauses, each in the bucket it was asked in; a
    wait's length from its question to its answer (none while it waits)."""
    mine, theirs = generated["mine"], generated["theirs"]
    for n, (session, minute, waited_s, outcome, tool) in enumerate([
        (mine, 6, 30, "approve", "transfer"), (mine, 7, 90, "deny", "transfer"),
        (mine, 8, None, "", "transfer"), (theirs, 71, 600, "expired", "refund"),
    ]):  # fmt: skip
        asked = T0 + timedelta(minutes=minute)
        Wait.objects.create(
            session=session, run=session.runs.first(), request_id=f"adk-{n}", kind="confirmation",
            tool=tool, asked_at=asked, outcome=outcome,
            answered_at=None if waited_s is None else asked + timedelta(seconds=waited_s),
        )  # fmt: skip
    remote_pause(alice, minute=41, decision="approve", waited_s=12)
    found = stats_of(operator_user)
    totals = found["totals"]
    assert totals["confirmations"] == {"approve": 2, "deny": 1, "waiting": 1, "expired": 1}
    assert totals["wait_seconds"] == {"p50": 30.0, "p95": 600.0, "p99": 600.0}
    assert found["series"][1]["confirmations"] == {"approve": 1, "deny": 1, "waiting": 1}
    assert found["series"][1]["wait_seconds"]["p95"] == 90.0
    assert found["series"][8]["confirmations"] == {"approve": 1}  # the remote one, 09:40
    assert stats_of(operator_user, source="ingested")["totals"]["wait_seconds"]["p50"] == 12.0
    assert stats_of(operator_user, source="local")["totals"]["confirmations"] == {
        "approve": 1, "deny": 1, "waiting": 1, "expired": 1}  # fmt: skip
    assert stats_of(operator_user, tool="refund")["totals"]["confirmations"] == {"expired": 1}
    assert stats_of(alice)["totals"]["confirmations"] == {"approve": 2, "deny": 1, "waiting": 1}
    assert stats_of(bob)["totals"]["wait_seconds"]["p50"] == 600.0


def test_scores_are_read_over_time_as_counts_means_and_shares(
    generated: Any, operator_user: User, alice: User
) -> None:
    from agentdash.scores.models import Score, ScoreDefinition
    from agentdash.scores.services import ScoreGiven, score_record

    ScoreDefinition.objects.create(name="helpful", kind="boolean")
    ScoreDefinition.objects.create(name="quality", kind="number", minimum=1, maximum=5)
    ScoreDefinition.objects.create(name="failure", kind="category", categories=["a", "b"])
    mine, theirs = generated["mine"], generated["theirs"]
    given = [(mine, "helpful", True, 1), (mine, "quality", 5, 1), (theirs, "helpful", False, 2),
             (theirs, "quality", 2, 3), (mine, "failure", "b", 20)]  # fmt: skip
    for n, (session, name, value, minute) in enumerate(given):
        score, _ = score_record(session=session, given=ScoreGiven(name, value), source="api",
                                actor=operator_user)  # fmt: skip
        # Given at a known time (and each its own row: one score per author and thing).
        at = T0 + timedelta(minutes=minute)
        Score.objects.filter(pk=score.pk).update(key=f"k{n}", updated_at=at)
    found = stats_of(operator_user)
    total = found["totals"]["scores"]
    assert total["helpful"] == {
        "count": 2,
        "mean": 0.5,
        "share": 0.5,
        "labels": {"yes": 1, "no": 1},
    }
    assert total["quality"]["count"] == 2 and total["quality"]["mean"] == 3.5
    assert total["quality"]["share"] == 0.625  # (1 + 0.25) / 2
    assert total["failure"] == {"count": 1, "mean": 1.0, "share": None, "labels": {"b": 1}}
    assert found["score_names"] == ["helpful", "quality", "failure"]
    assert found["series"][0]["scores"]["helpful"]["share"] == 0.5  # 09:00–09:05
    assert found["series"][4]["scores"]["failure"]["count"] == 1  # 09:20–09:25
    assert stats_of(alice)["totals"]["scores"]["helpful"]["count"] == 1  # hers only


def test_the_numbers_split_by_the_instruction_version_the_model_calls_were_given(
    generated: Any, operator_user: User
) -> None:
    mine, theirs = generated["mine"], generated["theirs"]
    for n, session, version in ((60, mine, "v1"), (61, theirs, "v2")):
        given = {"gen_ai.agent.name": "analyst", "agentdash.instruction.version": version}
        step(session, n, "model", 12, 1.0, **given)
    everyone = stats_of(operator_user)["totals"]
    first = stats_of(operator_user, instruction="analyst v1")["totals"]
    second = stats_of(operator_user, instruction="analyst v2")["totals"]
    assert first["runs"] == 4 and second["runs"] == 1  # alice's session, bob's
    assert first["runs"] + second["runs"] < everyone["runs"]  # the ingested one has neither
    assert stats_of(operator_user, instruction="analyst v9")["totals"]["runs"] == 0
    client = Client()
    client.force_login(operator_user)
    bad = client.get("/monitor/stats.json", {"instruction": "v1"})
    assert bad.status_code == 400 and "instruction" in bad.json()["error"]["fields"]
