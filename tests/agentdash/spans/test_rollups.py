"""The step rollups kept by the span store: every ended model and tool call counted once per
period — by the batch write and the single upsert, an open version not at all, a final
version sent again not twice —, under its session's agent, owner and source; the duration
bins' promise (within 12.3 %); a recount from the spans equals what was kept; two writers at
once both count."""

from __future__ import annotations

import io
import threading
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.db import close_old_connections, connection, connections, transaction
from django.db.models import Sum

from agentdash.agent_sessions.models import AgentSession
from agentdash.spans.models import StepRollup
from agentdash.spans.rehome import usage_uncount
from agentdash.spans.rollups import (
    BIN_FIELDS,
    BINS,
    PERIODS,
    Step,
    bin_seconds,
    duration_bin,
    rollups_count,
    rollups_rebuild,
    steps_of,
)
from agentdash.spans.services import span_upsert, spans_store
from agentdash.spans.span_version import SpanVersion
from agentdash.spans.step_reads import steps_read, steps_read_spans
from tests.agentdash.stored import session_of
from tests.waits import until

pytestmark = [pytest.mark.django_db, pytest.mark.database]

T0 = 1_764_000_000  # a whole day (unix seconds)
S = 1_000_000_000


def call(n: int, session_id: str, kind: str, at_s: int, seconds: float, *, end: bool = True,
         status: str = "ok", **attributes: Any) -> SpanVersion:  # fmt: skip
    start = (T0 + at_s) * S
    names = {"tool": {"gen_ai.tool.name": "lookup"},
             "model": {"gen_ai.request.model": "gemini-x", "gen_ai.usage.input_tokens": 100,
                       "gen_ai.usage.output_tokens": 10}}  # fmt: skip
    return SpanVersion(
        trace_id=f"{n:032x}", span_id=f"{n:016x}", name=f"{kind} {n}", start_time=start,
        end_time=start + int(seconds * S) if end else None, status=status,
        session_id=session_id,
        attributes={"agentdash.span.kind": kind, **names.get(kind, {}), **attributes},
    )  # fmt: skip


def totals(period: int, **where: Any) -> dict[str, Any]:
    rows = StepRollup.objects.filter(period=period, **where)
    return rows.aggregate(calls=Sum("calls"), tokens_in=Sum("tokens_in"), seconds=Sum("seconds"))


def test_each_ended_call_counts_once_in_every_period(alice: User) -> None:
    session_of(alice, "s-a", "capital_agent")
    session_of(None, "otlp-" + "e" * 40, "weather-app")
    spans_store(versions=[
        call(1, "s-a", "model", 10, 1.5),
        call(2, "s-a", "tool", 70, 0.2, status="error"),
        call(3, "s-a", "model", 3700, 2.0, end=False),  # open: not yet
        call(4, "s-a", "agent", 20, 5.0),  # not a model or tool call
        call(5, "otlp-" + "e" * 40, "tool", 30, 0.01),
    ])  # fmt: skip
    spans_store(versions=[call(3, "s-a", "model", 3700, 2.0)])  # it ends
    spans_store(versions=[call(3, "s-a", "model", 3700, 9.0)])  # sent again: final already
    for period in PERIODS:
        assert totals(period)["calls"] == 4
        assert totals(period, kind="model")["tokens_in"] == 200
        assert totals(period, kind="model")["seconds"] == pytest.approx(3.5)
    fives = StepRollup.objects.filter(period=300, kind="model").order_by("bucket")
    assert [(r.bucket, r.agent, r.external) for r in fives] == [
        (T0, "capital_agent", False), (T0 + 3600, "capital_agent", False),
    ]  # fmt: skip
    [tool_error] = StepRollup.objects.filter(period=3600, kind="tool", error=True)
    assert (tool_error.name, tool_error.calls, tool_error.bucket) == ("lookup", 1, T0)
    [outside] = StepRollup.objects.filter(period=86400, external=True)
    assert outside.agent == "weather-app"
    assert getattr(outside, f"b{duration_bin(0.01):02d}") == outside.calls == 1


def test_calls_of_one_batch_in_two_short_buckets_add_up_in_the_longer_ones(alice: User) -> None:
    session_of(alice, "s-a", "capital_agent")
    spans_store(versions=[
        call(1, "s-a", "model", 10, 1.5),
        call(2, "s-a", "model", 400, 0.25),  # the next five minutes, the same hour
        call(3, "s-a", "model", 420, 0.25),
    ])  # fmt: skip
    fives = StepRollup.objects.filter(period=300).order_by("bucket")
    assert [(r.bucket, r.calls) for r in fives] == [(T0, 1), (T0 + 300, 2)]
    for period in PERIODS[1:]:
        [row] = StepRollup.objects.filter(period=period)
        assert (row.bucket, row.calls, row.tokens_in) == (T0 - T0 % period, 3, 300)
        assert row.seconds == pytest.approx(2.0)
        assert getattr(row, f"b{duration_bin(0.25):02d}") == 2
        assert getattr(row, f"b{duration_bin(1.5):02d}") == 1


def test_the_single_upsert_counts_too_and_a_recount_agrees(alice: User) -> None:
    session_of(alice, "s-a", "capital_agent")
    for n, seconds in enumerate((0.0004, 0.05, 1.0, 30.0, 100_000.0), start=1):
        version = call(n, "s-a", "tool", n * 61, seconds)
        span_upsert(trace_id=version.trace_id, span_id=version.span_id, name=version.name,
                    start_time=version.start_time, end_time=version.end_time,
                    session_id="s-a", attributes=version.attributes)  # fmt: skip
    kept = sorted(StepRollup.objects.values_list(
        "period", "bucket", "kind", "name", "calls", "seconds", *BIN_FIELDS))  # fmt: skip
    assert sum(r[4] for r in kept if r[0] == 300) == 5
    day = [r for r in kept if r[0] == 86400]
    filled = {i for row in day for i, n in enumerate(row[6:]) if n}
    assert filled == {0, duration_bin(0.05), duration_bin(1.0), duration_bin(30.0), BINS - 1}
    assert rollups_rebuild() == 5
    assert sorted(StepRollup.objects.values_list(
        "period", "bucket", "kind", "name", "calls", "seconds", *BIN_FIELDS)) == kept  # fmt: skip


def test_a_bins_middle_is_within_an_eighth_of_every_duration_in_it() -> None:
    seconds = 0.001
    while seconds < 2 ** (70 / 3) / 1000:  # the last bin's start: 2.9 h
        middle = bin_seconds(duration_bin(seconds))
        assert abs(middle - seconds) / seconds < 0.1225, seconds
        seconds *= 1.013
    assert duration_bin(0) == 0 and duration_bin(10**9) == BINS - 1


def test_reads_fold_periods_into_buckets_filter_and_agree_with_the_spans(
    alice: User, bob: User
) -> None:
    session_of(alice, "s-a", "capital_agent")
    session_of(bob, "s-b", "support_agent")
    spans_store(versions=[
        call(n, "s-a" if n % 2 else "s-b", "model" if n % 3 else "tool", n * 60, n / 7,
             status="error" if n % 5 == 0 else "ok")
        for n in range(1, 31)
    ])  # fmt: skip
    read = steps_read(start_s=T0, end_s=T0 + 3600, step_s=300)
    assert sorted({at for at, _ in read.by_bucket}) == [T0 + i * 300 for i in range(7)]
    assert sum(v[0] for v in read.by_bucket.values()) == 30
    assert sum(sum(b) for b in read.bins.values()) == 30
    every = AgentSession.objects.all()
    spans = steps_read_spans(start_s=T0, end_s=T0 + 3600, step_s=300, sessions=every)
    assert spans == read  # the same numbers, from the rollups or from every span
    hourly = steps_read(start_s=T0, end_s=T0 + 3600, step_s=3600, agent="support_agent")
    theirs = steps_read_spans(start_s=T0, end_s=T0 + 3600, step_s=3600,
                              sessions=every.filter(owner=bob))  # fmt: skip
    assert hourly == theirs and hourly.by_name[("model", "gemini-x")][0] == 10
    tools = steps_read(start_s=T0, end_s=T0 + 3600, step_s=300, tool="nothing")
    assert {kind for kind, _ in tools.by_name} == {"model"}
    assert steps_read(start_s=T0 + 7200, end_s=T0 + 9000, step_s=900).by_bucket == {}
    with pytest.raises(ValueError, match="no rollup period divides 60 s"):
        steps_read(start_s=T0, end_s=T0 + 60, step_s=60)


def test_a_legacy_step_that_stops_counting_usage_leaves_the_rollups(alice: User) -> None:
    session_of(alice, "s-a", "capital_agent")
    spans_store(versions=[call(1, "s-a", "model", 0, 1.0)])
    usage_uncount(spans=[(f"{1:032x}", f"{1:016x}")], name="model 1")
    assert totals(300)["calls"] == 1 and totals(300)["tokens_in"] == 0
    assert set(StepRollup.objects.filter(calls__gt=0).values_list("name", flat=True)) == {""}


@pytest.mark.django_db(transaction=True)
def test_two_writers_at_once_both_count(alice: User) -> None:
    session_of(alice, "s-a", "capital_agent")
    session_of(alice, "s-b", "capital_agent")
    go = threading.Barrier(2)
    failures: list[BaseException] = []

    def write(session_id: str, first: int) -> None:
        try:
            go.wait(10)
            for n in range(first, first + 20):
                spans_store(versions=[call(n, session_id, "tool", 5, 0.2)])
        except BaseException as exc:
            failures.append(exc)
        finally:
            close_old_connections()

    threads = [threading.Thread(target=write, args=(s, f)) for s, f in (("s-a", 1), ("s-b", 100))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not failures
    [row] = StepRollup.objects.filter(period=300)
    assert row.calls == 40


def test_the_rebuild_command_recounts_and_asks_to_be_sure(alice: User) -> None:
    session_of(alice, "s-a", "capital_agent")
    spans_store(versions=[call(1, "s-a", "tool", 0, 1.0), call(2, "s-a", "model", 5, 1.0)])
    StepRollup.objects.update(calls=999)  # drifted
    out = io.StringIO()
    call_command("rollups", "--rebuild", stdout=out)
    assert out.getvalue() == "2 calls counted into the rollups.\n"
    assert totals(300)["calls"] == 2
    with pytest.raises(CommandError, match="say --rebuild"):
        call_command("rollups")


@pytest.mark.django_db(transaction=True)
def test_writers_of_the_same_rollups_wait_for_each_other_instead_of_deadlocking(
    alice: User,
) -> None:
    """Two workers' flushes of one agent's calls add to the same rollup rows. Each locks its
    rows in one statement; in different orders, one holding what the other waits for, they
    deadlock (PostgreSQL aborts one after a second). Made to happen here: a third writer
    holds the rows of call ``x``; a writer counting ``x`` then ``z`` queues on them; one
    counting ``z`` then ``x`` takes ``z``'s rows and queues behind it — unless both lock in
    the rows' key order, whatever the order of their calls."""
    if connection.vendor != "postgresql":
        return  # SQLite: one writer at a time, nothing to deadlock
    session_of(alice, "s-a", "capital_agent")

    def step(tool: str) -> list[Step]:
        attributes = {"agentdash.span.kind": "tool", "gen_ai.tool.name": tool}
        start = (T0 + 5) * S
        return steps_of(session_id="s-a", start_time=start, end_time=start + S, status="ok",
                        attributes=attributes, usage_model="", tokens=(0, 0, 0, 0))  # fmt: skip

    x, z = step("x"), step("z")
    with transaction.atomic():
        rollups_count(x + z)  # the rows exist: each writer waits in line for a row's lock
    failures: list[BaseException] = []

    def count(steps: list[Step]) -> None:
        try:
            with transaction.atomic():
                rollups_count(steps)
        except BaseException as exc:
            failures.append(exc)
        finally:
            close_old_connections()

    def waiting() -> int:
        with connections["default"].cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND datname = current_database()"
            )
            return int(cursor.fetchone()[0])

    def queued(n: int) -> None:
        until(lambda: waiting() >= n, f"{n} writers to wait for a lock")

    holder = threading.Event()
    release = threading.Event()

    def hold() -> None:
        try:
            with transaction.atomic():
                rollups_count(x)
                holder.set()
                release.wait(30)
        finally:
            close_old_connections()

    threads = [threading.Thread(target=hold)]
    threads[0].start()
    assert holder.wait(30)
    threads.append(threading.Thread(target=count, args=(x + z,)))
    threads[1].start()
    queued(1)
    threads.append(threading.Thread(target=count, args=(z + x,)))
    threads[2].start()
    queued(2)
    release.set()
    for thread in threads:
        thread.join(60)
    assert not failures, failures
    assert StepRollup.objects.filter(period=300, name="x").get().calls == 4
    assert StepRollup.objects.filter(period=300, name="z").get().calls == 3
