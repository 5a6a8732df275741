"""The reaper: runs whose worker stopped are queued again, then failed; their open spans are
closed as errored; queued runs nobody took are submitted again."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.db import OperationalError
from django.utils import timezone

from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.changes.models import SessionChange
from agentdash.runs import reaper
from agentdash.runs.models import Run
from agentdash.runs.reaper import runs_reap
from agentdash.spans.models import Span

pytestmark = pytest.mark.django_db(transaction=True)

TRACE = "a" * 32
OTHER_TRACE = "b" * 32


@pytest.fixture
def session() -> AgentSession:
    return AgentSession.objects.create(
        id="s-reap", app_name="reap_agent", user_id="u", last_update_time=time.time()
    )


def make_run(session: AgentSession, **fields: Any) -> Run:
    defaults: dict[str, Any] = {
        "agent_name": "reap_agent",
        "invocation_id": f"e-{time.monotonic_ns()}",
        "message": {"role": "user", "parts": [{"text": "hi"}]},
    }
    return Run.objects.create(session=session, **{**defaults, **fields})


def make_span(session: AgentSession, span_id: str, trace_id: str = TRACE, **fields: Any) -> Span:
    return Span.objects.create(
        trace_id=trace_id,
        span_id=span_id,
        name=f"span {span_id}",
        start_time=time.time_ns() - 10**9,
        session=session,
        **fields,
    )


def ago(seconds: float) -> Any:
    return timezone.now() - timedelta(seconds=seconds)


def test_a_run_whose_heartbeat_stopped_is_queued_again_then_failed(session: AgentSession) -> None:
    run = make_run(
        session,
        status=Run.Status.RUNNING,
        attempt=1,
        worker="host:1",
        heartbeat_at=ago(600),
        started_at=ago(700),
        trace_id=TRACE,
    )
    open_span = make_span(session, "1" * 16)
    ended = make_span(session, "2" * 16, end_time=time.time_ns(), status=Span.Status.OK)
    elsewhere = make_span(session, "3" * 16, trace_id=OTHER_TRACE)
    alive = make_run(
        session, status=Run.Status.RUNNING, attempt=1, heartbeat_at=ago(1), started_at=ago(5)
    )
    submitted: list[int] = []

    report = runs_reap(stale_after_s=30, max_attempts=2, submit=submitted.append)

    assert (report.requeued, report.failed, submitted) == ([run.pk], [], [run.pk])
    run.refresh_from_db()
    assert (run.status, run.worker, run.heartbeat_at, run.attempt) == (
        Run.Status.QUEUED,
        "",
        None,
        1,
    )
    assert "worker stopped: no heartbeat since" in run.error and "queued again" in run.error
    open_span.refresh_from_db()
    assert open_span.end_time is not None and open_span.status == Span.Status.ERROR
    assert open_span.status_message.startswith("run's worker died: worker stopped")
    assert open_span.run_id == run.pk
    ended.refresh_from_db()
    elsewhere.refresh_from_db()
    assert (ended.status, elsewhere.end_time) == (Span.Status.OK, None)
    assert Run.objects.get(pk=alive.pk).status == Run.Status.RUNNING
    changes = list(SessionChange.objects.order_by("seq").values_list("kind", "ref"))
    assert changes == [("span", f"{TRACE}:{'1' * 16}"), ("run", str(run.pk))]

    # The second attempt's worker dies too: attempts are used up, the run fails.
    Run.objects.filter(pk=run.pk).update(
        status=Run.Status.RUNNING, attempt=2, worker="host:2", heartbeat_at=ago(120)
    )
    report = runs_reap(stale_after_s=30, max_attempts=2, submit=submitted.append)

    assert (report.requeued, report.failed, submitted) == ([], [run.pk], [run.pk])
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED and run.finished_at is not None
    assert run.error.startswith("worker stopped: no heartbeat since ")
    assert "(worker host:2, attempt 2 of 2)" in run.error
    told = SessionEvent.objects.get(session=session)
    assert (told.author, told.data["error_code"]) == ("reap_agent", "WORKER_LOST")
    assert told.data["error_message"] == f"The run failed: {run.error}."

    # Nothing left to reap.
    again = runs_reap(stale_after_s=30, max_attempts=2, submit=submitted.append)
    assert (again.requeued, again.failed, again.resubmitted) == ([], [], [])


def test_a_dead_run_someone_asked_to_stop_is_cancelled_not_run_again(
    session: AgentSession,
) -> None:
    run = make_run(
        session,
        status=Run.Status.RUNNING,
        attempt=1,
        heartbeat_at=ago(600),
        started_at=ago(700),
        cancel_requested=True,
        cancel_reason="wrong question",
    )
    submitted: list[int] = []
    report = runs_reap(stale_after_s=30, max_attempts=3, submit=submitted.append)
    assert (report.requeued, report.failed, submitted) == ([], [], [])
    run.refresh_from_db()
    assert run.status == Run.Status.CANCELLED and run.finished_at is not None
    assert run.error.startswith("Cancelled: wrong question (worker stopped: no heartbeat")
    assert not SessionEvent.objects.filter(session=session).exists()


def test_queued_runs_nobody_took_are_submitted_again(session: AgentSession) -> None:
    forgotten = make_run(session, status=Run.Status.QUEUED, queued_at=ago(600))
    fresh = make_run(session, status=Run.Status.QUEUED, queued_at=ago(1))
    submitted: list[int] = []

    report = runs_reap(
        stale_after_s=30, max_attempts=3, requeue_after_s=60, submit=submitted.append
    )

    assert report.resubmitted == submitted == [forgotten.pk]
    forgotten.refresh_from_db()
    assert forgotten.queued_at is not None and forgotten.queued_at > ago(60)
    assert Run.objects.get(pk=fresh.pk).status == Run.Status.QUEUED
    assert (
        runs_reap(
            stale_after_s=30, max_attempts=3, requeue_after_s=60, submit=submitted.append
        ).resubmitted
        == []
    )


async def test_after_a_failed_pass_running_runs_are_left_alone_for_the_stale_period(
    session: AgentSession, settings: Any, monkeypatch: pytest.MonkeyPatch, recorder: Any
) -> None:
    """An outage stops heartbeats and reaper passes alike: once the database is back, a
    live run's worker gets ``RUN_STALE_AFTER_S`` to write its heartbeat before its run can
    be taken from it."""
    settings.AGENTDASH = {
        **settings.AGENTDASH,
        "REAPER_INTERVAL_S": 0.05,
        "RUN_STALE_AFTER_S": 1.0,
        "RUN_REQUEUE_AFTER_S": 3600.0,
    }
    run = await sync_to_async(make_run)(
        session, status=Run.Status.RUNNING, attempt=1, worker="w:1", heartbeat_at=ago(5)
    )
    passes: list[tuple[float, bool]] = []
    real = reaper.runs_reap

    def unreachable_once(**options: Any) -> Any:
        passes.append((time.monotonic(), options["running"]))
        if len(passes) == 1:
            raise OperationalError("connection refused: the database is away")
        return real(**options)

    monkeypatch.setattr(reaper, "runs_reap", unreachable_once)
    task = asyncio.create_task(reaper.reap_forever())
    try:
        while (await Run.objects.aget(pk=run.pk)).status == Run.Status.RUNNING:
            assert time.monotonic() - passes[0][0] < 30, passes
            await asyncio.sleep(0.02)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    failed_at = passes[0][0]
    assert not passes[0][1]  # a reaper just started leaves running runs alone too
    # Passes went on, running runs left alone, then every later pass looked at them (the
    # reaper's hold starts when it has logged the failure, a little after it was raised).
    held = [at for at, running in passes[1:] if not running]
    first_reaping = next(at for at, running in passes[1:] if running)
    assert len(held) >= 5 and max(held) < first_reaping
    assert all(running for at, running in passes if at > first_reaping)
    assert first_reaping - failed_at >= 1.0
    # Submitted once the requeue commits, on the reaper's thread: the status this test polls
    # can be read a moment before that thread gets to it.
    deadline = time.monotonic() + 30
    while not recorder.submitted and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert recorder.submitted == [run.pk]
