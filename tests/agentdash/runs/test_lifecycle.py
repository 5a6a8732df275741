"""The worker's last writes: an attempt's outcome and what the chat is told go together, and
only while the attempt is still the run's."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agentdash.agent_sessions.models import SessionEvent
from agentdash.changes.models import SessionChange
from agentdash.runs.lifecycle import run_claim, run_conclude, run_requeue
from agentdash.runs.models import Run
from agentdash.runs.services import run_cancel_request

pytestmark = pytest.mark.django_db

MakeRun = Callable[..., Run]


def claimed(make_run: MakeRun) -> Run:
    run = run_claim(run_id=make_run().pk, worker="w1")
    assert run is not None
    return run


def test_the_outcome_and_its_report_are_written_together_report_first(make_run: MakeRun) -> None:
    run = claimed(make_run)
    assert run_conclude(run=run, status=Run.Status.FAILED, error="boom", report=("X", "It broke."))
    stored = Run.objects.get(pk=run.pk)
    assert (stored.status, stored.error) == (Run.Status.FAILED, "boom")
    (event,) = SessionEvent.objects.filter(session_id=run.session_id)
    assert event.data["error_code"] == "X" and event.data["error_message"] == "It broke."
    kinds = list(
        SessionChange.objects.filter(session_id=run.session_id)
        .order_by("seq")
        .values_list("kind", flat=True)
    )
    assert kinds[-2:] == ["event", "run"]  # a client sees the report, then the run's end


def test_an_attempt_that_is_no_longer_the_runs_writes_nothing(make_run: MakeRun) -> None:
    run = claimed(make_run)
    # Reaped while alive: the run went back to the queue (the next attempt is another's).
    assert run_requeue(run=Run.objects.get(pk=run.pk), why="reaped", max_attempts=3) == "queued"
    assert not run_conclude(
        run=run, status=Run.Status.CANCELLED, error="stop", report=("CANCELLED", "Stopped.")
    )
    assert Run.objects.get(pk=run.pk).status == Run.Status.QUEUED
    assert not SessionEvent.objects.filter(session_id=run.session_id).exists()


def test_requeue_fails_the_run_once_it_is_out_of_attempts_and_says_so(make_run: MakeRun) -> None:
    run = claimed(make_run)
    why = "the database was unreachable"
    assert run_requeue(run=run, why=why, max_attempts=1, failure_code="RUN_FAILED") == "failed"
    stored = Run.objects.get(pk=run.pk)
    assert stored.status == Run.Status.FAILED and stored.finished_at is not None
    assert stored.error == "the database was unreachable (attempt 1 of 1)"
    (event,) = SessionEvent.objects.filter(session_id=run.session_id)
    assert event.data["error_message"] == f"The run failed: {stored.error}"
    # Once more (the acknowledgement of the first was lost): nothing is written twice.
    assert run_requeue(run=run, why=why, max_attempts=1, failure_code="RUN_FAILED") == ""
    assert SessionEvent.objects.filter(session_id=run.session_id).count() == 1


def test_a_queued_run_asked_to_stop_is_cancelled_when_claimed_not_run(make_run: MakeRun) -> None:
    run = make_run(cancel_requested=True, cancel_reason="never mind")
    assert run_claim(run_id=run.pk, worker="w1") is None
    stored = Run.objects.get(pk=run.pk)
    assert (stored.status, stored.attempt, stored.error) == (
        Run.Status.CANCELLED,
        0,
        "Cancelled: never mind",
    )
    last = SessionChange.objects.filter(session_id=run.session_id).order_by("seq").last()
    assert last is not None and (last.kind, last.ref) == ("run", str(run.pk))


def test_an_attempt_interrupted_after_a_stop_was_asked_ends_cancelled(make_run: MakeRun) -> None:
    run = claimed(make_run)
    run_cancel_request(run=run, actor=None, reason="stop it")  # its heartbeat never saw it
    assert run_requeue(run=run, why="the database was unreachable", max_attempts=3) == (
        Run.Status.CANCELLED
    )
    assert Run.objects.get(pk=run.pk).error == "Cancelled: stop it"


def test_asking_again_to_stop_a_queued_run_cancels_it(make_run: MakeRun) -> None:
    run = make_run(cancel_requested=True, cancel_reason="first ask")  # its attempt was reaped
    stored = run_cancel_request(run=run, actor=None, reason="second ask")
    assert stored.status == Run.Status.CANCELLED and stored.cancel_reason == "second ask"
