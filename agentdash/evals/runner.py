"""Executing an eval run: each case in a new session of the run's agent, owned by whoever
started the run, its user messages sent one at a time through the run pipeline
(``runs.services.run_enqueue``: the configured executor runs them, the timeline shows them),
then the session's conversation judged against the case (``runtime.evaluation``).

:func:`eval_run_execute` blocks until the run is over: the management command calls it,
the page hands it to :func:`eval_run_spawn` (a thread of its own). A case's turn waits at
most ``turn_timeout`` seconds for its run to end; a run that ends waiting for a tool
confirmation ends its turn.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from functools import partial
from typing import Any

from django.db import close_old_connections, connections, transaction
from django.db.models import Q
from django.utils import timezone

from agentdash.agent_sessions.services import session_create
from agentdash.core.conf import agentdash_setting
from agentdash.evals.models import EvalCaseResult, EvalRun
from agentdash.evals.selectors import eval_set_of, session_invocations
from agentdash.runs.models import Run
from agentdash.runs.services import run_cancel_request, run_enqueue
from runtime.evaluation import (
    RESPONSE_MATCH_SCORE,
    TOOL_TRAJECTORY_AVG_SCORE,
    CaseResult,
    EvalCase,
    evaluate_case,
)

logger = logging.getLogger(__name__)

TURN_TIMEOUT_S = 300.0
POLL_S = 0.05
ENDED = (Run.Status.SUCCEEDED, Run.Status.FAILED, Run.Status.CANCELLED, Run.Status.WAITING)


class TurnTimeout(Exception):
    """A turn's run did not end in time."""


def eval_run_execute(*, eval_run_id: int, turn_timeout: float = TURN_TIMEOUT_S) -> EvalRun:
    """Run every pending case of eval run ``eval_run_id`` in order and record each result,
    then the run's status: ``passed`` when every case passed, else ``failed``; ``error``
    when it could not go on. Returns the stored run. A run that is not ``queued`` is
    returned as it is (someone else executes it, or did)."""
    claimed = EvalRun.objects.filter(pk=eval_run_id, status=EvalRun.Status.QUEUED).update(
        status=EvalRun.Status.RUNNING, heartbeat_at=timezone.now()
    )
    eval_run = EvalRun.objects.select_related("eval_set", "started_by").get(pk=eval_run_id)
    if not claimed:
        return eval_run
    try:
        cases = eval_set_of(record=eval_run.eval_set).eval_cases
        for result in eval_run.cases.filter(status=EvalCaseResult.Status.PENDING):
            _beat(eval_run.pk)
            if result.position < len(cases):
                _case_execute(eval_run, result, cases[result.position], turn_timeout)
            else:
                _case_error(result, "the eval set changed: this case is gone")
    except Exception as exc:
        logger.exception("eval run %s stopped", eval_run_id)
        _finish(eval_run, EvalRun.Status.ERROR, f"{type(exc).__name__}: {exc}")
        return eval_run
    failing = eval_run.cases.exclude(status=EvalCaseResult.Status.PASSED).exists()
    _finish(eval_run, EvalRun.Status.FAILED if failing else EvalRun.Status.PASSED)
    return eval_run


def eval_run_spawn(eval_run_id: int) -> None:
    """Execute the run in a daemon thread of this process (the page's "Run"). If the process
    stops first, its heartbeat stops: another process's reaper queues it again and executes
    it there (:func:`eval_runs_reap`)."""

    def work() -> None:
        close_old_connections()
        try:
            eval_run_execute(eval_run_id=eval_run_id)
        finally:
            connections.close_all()

    threading.Thread(target=work, name=f"agentdash-eval-{eval_run_id}", daemon=True).start()


def _case_execute(
    eval_run: EvalRun, result: EvalCaseResult, case: EvalCase, turn_timeout: float
) -> None:
    if case.conversation is None:
        _case_error(result, "a conversation scenario needs ADK's user simulator: not run here")
        return
    user = eval_run.started_by
    if user is None:
        _case_error(result, "the person who started this run is gone: nobody owns its sessions")
        return
    state = case.session_input.state if case.session_input is not None else {}
    try:
        with transaction.atomic():
            session = session_create(
                app_name=eval_run.agent_name,
                user_id=str(user.pk),
                owner=user,
                state=state,
                title=f"eval {eval_run.eval_set.eval_set_id} / {case.eval_id}"[:200],
            )
            result.session, result.status = session, EvalCaseResult.Status.RUNNING
            result.save(update_fields=["session", "status"])
        for number, turn in enumerate(case.conversation, start=1):
            run = run_enqueue(
                session=session,
                agent_name=eval_run.agent_name,
                message=turn.user_content.model_copy(update={"role": "user"}),
                requested_by=user,
            )
            _wait_for(run.pk, turn_timeout, eval_run.pk)
            if number < len(case.conversation):
                _unpause(run.pk)
    except TurnTimeout as exc:
        _case_error(result, str(exc))
        return
    except Exception as exc:  # a message the pipeline refuses, the agent gone …
        _case_error(result, _reason(exc))
        return
    judged = evaluate_case(case, session_invocations(session_id=session.id), eval_run.criteria)
    _case_record(result, judged)


def _unpause(run_id: int) -> None:
    """A turn that ended waiting for an approval nobody gives in an eval: the session's runs
    take turns, so the next turn would wait behind it; the paused run is cancelled (saying
    why) and the conversation goes on, the approval unanswered — as a scripted user would."""
    run = Run.objects.filter(pk=run_id, status=Run.Status.WAITING).first()
    if run is not None:
        run_cancel_request(
            run=run, actor=None, reason="eval: the next turn goes on without an answer to it"
        )


def _wait_for(run_id: int, timeout: float, eval_run_id: int) -> None:
    deadline = time.monotonic() + timeout
    beat_every = float(agentdash_setting("RUN_HEARTBEAT_S"))
    beaten = time.monotonic()
    while True:
        status = Run.objects.filter(pk=run_id).values_list("status", flat=True).first()
        if status is None or status in ENDED:
            return
        if time.monotonic() > deadline:
            raise TurnTimeout(f"run {run_id} did not end within {timeout:g} s (it is {status})")
        if time.monotonic() - beaten >= beat_every:
            _beat(eval_run_id)
            beaten = time.monotonic()
        time.sleep(POLL_S)


def _beat(eval_run_id: int) -> None:
    EvalRun.objects.filter(pk=eval_run_id, status=EvalRun.Status.RUNNING).update(
        heartbeat_at=timezone.now()
    )


def eval_runs_reap(
    *, stale_after_s: float, max_attempts: int, spawn: Callable[[int], None] | None = None
) -> list[int]:
    """Queue again (and execute in this process) each ``running`` eval run whose heartbeat
    is older than ``stale_after_s`` — its process stopped — with its unfinished cases to run
    again from the start (each in a new session); one that has had ``max_attempts`` ends
    ``error``, saying why. The ids taken up. Called by every reaper pass
    (``runs.reaper.reap_hook_add``, in ``EvalsConfig.ready``)."""
    spawn = spawn or eval_run_spawn
    cutoff = timezone.now() - timedelta(seconds=stale_after_s)
    stale = Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, created_at__lt=cutoff)
    taken: list[int] = []
    for eval_run in EvalRun.objects.filter(stale, status=EvalRun.Status.RUNNING):
        seen = eval_run.heartbeat_at or eval_run.created_at
        why = f"its process stopped (no heartbeat since {seen:%Y-%m-%d %H:%M:%S} UTC)"
        mine = EvalRun.objects.filter(
            stale, pk=eval_run.pk, status=EvalRun.Status.RUNNING, attempt=eval_run.attempt
        )
        with transaction.atomic():
            if eval_run.attempt < max_attempts:
                changed = mine.update(
                    status=EvalRun.Status.QUEUED,
                    attempt=eval_run.attempt + 1,
                    heartbeat_at=None,
                    error=f"{why}; queued again (attempt {eval_run.attempt + 1})",
                )
            else:
                changed = mine.update(
                    status=EvalRun.Status.ERROR,
                    finished_at=timezone.now(),
                    error=f"{why}, after {eval_run.attempt} attempts",
                )
            if not changed:
                continue  # another process's reaper took it
            eval_run.cases.filter(status=EvalCaseResult.Status.RUNNING).update(
                status=EvalCaseResult.Status.PENDING
            )
            if eval_run.attempt < max_attempts:
                transaction.on_commit(partial(spawn, eval_run.pk))
        logger.warning("eval run %s: %s", eval_run.pk, why)
        taken.append(eval_run.pk)
    return taken


def _case_record(result: EvalCaseResult, judged: CaseResult) -> None:
    result.status = EvalCaseResult.Status.PASSED if judged.passed else EvalCaseResult.Status.FAILED
    result.tool_trajectory_score = judged.scores.get(TOOL_TRAJECTORY_AVG_SCORE)
    result.response_match_score = judged.scores.get(RESPONSE_MATCH_SCORE)
    result.exact_match = judged.exact_match
    result.details = [t.as_data() for t in judged.turns]
    result.save()


def _case_error(result: EvalCaseResult, message: str) -> None:
    result.status, result.error = EvalCaseResult.Status.ERROR, message[:2000]
    result.save(update_fields=["status", "error"])


def _finish(eval_run: EvalRun, status: str, error: str = "") -> None:
    eval_run.status, eval_run.error, eval_run.finished_at = status, error[:2000], timezone.now()
    eval_run.save(update_fields=["status", "error", "finished_at"])


def _reason(exc: Exception) -> str:
    messages: Any = getattr(exc, "message_dict", None)
    if messages:
        return "; ".join(f"{k}: {' '.join(v)}" for k, v in messages.items())
    return f"{type(exc).__name__}: {exc}"
