"""Writes of the runs app: a run's lifecycle from queued to an outcome.

Every visible change of a run (queued, running, its trace, an outcome) records the session's
next change seq (kind ``run``, ref the run's id) in the same transaction, so a client catches
up on it from the database. Transitions of a running run are conditional on its status *and*
attempt: a worker that lost its run (the reaper gave it to another) can no longer write it.
"""

from __future__ import annotations

import logging
from typing import Any, NamedTuple

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from google.genai import types

from agentdash.agent_sessions.models import AgentSession
from agentdash.agent_sessions.session_service import DjangoSessionService
from agentdash.core.services import audit_record
from agentdash.core.threads import in_worker_thread
from agentdash.registry.loader import AgentNotRegisteredError
from agentdash.registry.selectors import agent_get
from agentdash.runs.models import Run
from agentdash.timeline.models import SessionChange
from agentdash.timeline.services import session_change_next
from runtime.agents.invocation_context import new_invocation_id
from runtime.events.event import Event
from runtime.sessions.base_session_service import GetSessionConfig

logger = logging.getLogger(__name__)

RUN_TARGET = "runs.run"
CANCELLABLE = (Run.Status.QUEUED, Run.Status.RUNNING)
FINISHED = (Run.Status.SUCCEEDED, Run.Status.FAILED, Run.Status.CANCELLED)
ERROR_MESSAGE_LIMIT = 4000

Actor = AbstractBaseUser | AnonymousUser | None


class RunNotCancellable(Exception):
    """The run has already finished: there is nothing left to cancel."""

    def __init__(self, run: Run) -> None:
        self.run = run
        super().__init__(
            f"Run {run.invocation_id} is {run.status}; only queued or running runs can be "
            "cancelled."
        )


class Heartbeat(NamedTuple):
    """What a heartbeat found: ``alive`` False when the run is no longer this attempt's."""

    alive: bool
    cancel_requested: bool
    cancel_reason: str


def run_change_record(*, run: Run) -> int:
    """Record a change of ``run`` in its session's change log; returns the seq."""
    return session_change_next(
        session_id=run.session_id, kind=SessionChange.Kind.RUN, ref=str(run.pk)
    )


def _has_content(part: types.Part) -> bool:
    """Non-blank text, or anything else (a function response, a file, data)."""
    if part.text is not None and part.text.strip():
        return True
    return bool(part.model_dump(exclude_none=True).keys() - {"text"})


def _message_clean(message: Any) -> dict[str, Any]:
    if not isinstance(message, types.Content):
        raise ValidationError(
            {"message": [f"must be a google.genai types.Content, not {type(message).__name__}"]}
        )
    parts = [p for p in message.parts or [] if _has_content(p)]
    if not parts:
        raise ValidationError({"message": ["the message is empty: say something"]})
    if message.role not in (None, "user"):
        raise ValidationError({"message": [f"role must be 'user', not {message.role!r}"]})
    return types.Content(role="user", parts=parts).model_dump(mode="json", exclude_none=True)


def run_enqueue(
    *, session: AgentSession, agent_name: str, message: types.Content, requested_by: Actor
) -> Run:
    """Queue a run of root agent ``agent_name`` answering ``message`` in ``session``.

    Creates the run (``queued``, a new invocation id) and its change seq in one transaction;
    once that commits, the run id goes to the executor (and the change seq, as every one,
    is announced to the live pipeline).
    Raises ``ValidationError`` (keys ``agent_name``, ``session``, ``message``) when the agent
    is not configured, the session belongs to another app than the agent's, or the message is
    empty. Call it outside an event loop; async code uses :func:`arun_enqueue`.
    """
    try:
        agent = agent_get(name=agent_name)
    except AgentNotRegisteredError as exc:
        raise ValidationError({"agent_name": [str(exc)]}) from None
    if session.app_name != agent.name:
        raise ValidationError(
            {
                "session": [
                    f"session {session.pk!r} belongs to app {session.app_name!r}, not to "
                    f"agent {agent.name!r}'s"
                ]
            }
        )
    data = _message_clean(message)
    user = requested_by if getattr(requested_by, "is_authenticated", False) else None
    with transaction.atomic():
        run = Run.objects.create(
            session=session,
            agent_name=agent.name,
            invocation_id=new_invocation_id(),
            status=Run.Status.QUEUED,
            message=data,
            requested_by=user,
            queued_at=timezone.now(),
        )
        run_change_record(run=run)
        run_id = run.pk
        transaction.on_commit(lambda: run_dispatch(run_id=run_id))
    return run


async def arun_enqueue(
    *, session: AgentSession, agent_name: str, message: types.Content, requested_by: Actor
) -> Run:
    """:func:`run_enqueue` for async code (a consumer): starts this process's executor on the
    running loop first (daphne has no lifespan), then enqueues from a worker thread."""
    from agentdash.runs.executors import executor_start

    await executor_start()
    enqueue = in_worker_thread(run_enqueue)
    run: Run = await enqueue(
        session=session, agent_name=agent_name, message=message, requested_by=requested_by
    )
    return run


def run_dispatch(*, run_id: int) -> None:
    """Hand a committed queued run to the executor. A failure to submit is logged, not
    raised: the run stays queued and the reaper submits it again."""
    from agentdash.runs.executors import executor_get

    try:
        executor_get().submit(run_id)
    except Exception:
        logger.exception("could not submit run %s; the reaper will submit it again", run_id)


def run_claim(*, run_id: int, worker: str) -> Run | None:
    """Take a queued run for ``worker``: running, attempt + 1, started and heartbeat now.

    The update is conditional on the run being queued, so of two workers handed the same run
    exactly one gets it; the other (and a delivery of a run that is no longer queued) gets
    ``None`` and must do nothing.
    """
    now = timezone.now()
    with transaction.atomic():
        taken = Run.objects.filter(pk=run_id, status=Run.Status.QUEUED).update(
            status=Run.Status.RUNNING,
            attempt=F("attempt") + 1,
            worker=worker[:128],
            started_at=now,
            heartbeat_at=now,
            finished_at=None,
        )
        if not taken:
            return None
        run = Run.objects.select_related("session").get(pk=run_id)
        run_change_record(run=run)
    return run


def _this_attempt(run: Run) -> Any:
    return Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING, attempt=run.attempt)


def run_heartbeat(*, run: Run) -> Heartbeat:
    """Write ``heartbeat_at`` of this attempt of a running run and say whether a cancel was
    asked for. Not a visible change (no seq): only the reaper reads heartbeats."""
    alive = _this_attempt(run).update(heartbeat_at=timezone.now()) == 1
    found = Run.objects.filter(pk=run.pk).values("cancel_requested", "cancel_reason").first()
    if found is None:
        return Heartbeat(alive=False, cancel_requested=False, cancel_reason="")
    return Heartbeat(alive, found["cancel_requested"], found["cancel_reason"])


def run_trace_set(*, run: Run, trace_id: str) -> bool:
    """Record the trace this attempt runs in (with a seq); False if the attempt is over."""
    with transaction.atomic():
        if not _this_attempt(run).exclude(trace_id=trace_id).update(trace_id=trace_id):
            return False
        run.trace_id = trace_id
        run_change_record(run=run)
    return True


def run_finish(*, run: Run, status: str, error: str = "", trace_id: str = "") -> bool:
    """End this attempt of a running run as ``status`` (succeeded, failed or cancelled), with
    ``error`` (capped) and ``trace_id`` when given, and a seq. Returns False, writing
    nothing, when the attempt is no longer the run's (reaped, or finished already)."""
    if status not in FINISHED:
        raise ValueError(f"a run finishes as one of {FINISHED}, not {status!r}")
    fields: dict[str, Any] = {
        "status": status,
        "finished_at": timezone.now(),
        "error": error[:ERROR_MESSAGE_LIMIT],
    }
    if trace_id:
        fields["trace_id"] = trace_id
    with transaction.atomic():
        if not _this_attempt(run).update(**fields):
            return False
        for key, value in fields.items():
            setattr(run, key, value)
        run_change_record(run=run)
    return True


def run_fail(*, run: Run, error: str, trace_id: str = "") -> bool:
    """:func:`run_finish` as ``failed`` with ``error``."""
    return run_finish(run=run, status=Run.Status.FAILED, error=error, trace_id=trace_id)


def run_report(*, run: Run, code: str, message: str) -> Event:
    """Tell the chat what happened to ``run``: append an event authored by the run's agent
    with ``error_code``/``error_message`` (capped), in the run's invocation. Returns it."""
    event = Event(
        invocation_id=run.invocation_id,
        author=run.agent_name,
        error_code=code,
        error_message=message[:ERROR_MESSAGE_LIMIT],
        turn_complete=True,
    )
    service = DjangoSessionService()
    session = service.get_session(
        app_name=run.session.app_name,
        user_id=run.session.user_id,
        session_id=run.session_id,
        config=GetSessionConfig(num_recent_events=0),
    )
    if session is None:  # deleted meanwhile: nobody to tell
        return event
    return service.append_event(session, event)


def _cancel_snapshot(run: Run) -> dict[str, Any]:
    return {
        "status": run.status,
        "cancel_requested": run.cancel_requested,
        "cancel_reason": run.cancel_reason,
    }


def run_cancel_request(*, run: Run, actor: Actor, reason: str = "") -> Run:
    """Stop a queued or running run, with one ``run.cancel_request`` audit row, in one
    transaction. Returns the stored run.

    A queued run is cancelled at once (status ``cancelled``): no worker will claim it. A
    running one gets ``cancel_requested`` and ``cancel_reason``; its worker sees them at its
    next heartbeat, stops the agent and ends the run ``cancelled``. Either is a change of the
    run (a seq).
    Asking again for a run already asked to stop changes nothing and writes nothing.
    Raises :class:`RunNotCancellable` when the run has finished (even if it finished a moment
    ago: the update is conditional on the status in the database).
    """
    with transaction.atomic():
        # NO KEY: inserts that reference the run (its spans) need not wait for this lock.
        current = Run.objects.select_for_update(no_key=True).get(pk=run.pk)
        if current.status in CANCELLABLE and current.cancel_requested:
            return current
        before = _cancel_snapshot(current)
        flags = {"cancel_requested": True, "cancel_reason": reason}
        updated = Run.objects.filter(pk=current.pk, status=Run.Status.QUEUED).update(
            **flags,
            status=Run.Status.CANCELLED,
            finished_at=timezone.now(),
            error=run_cancel_message(reason),
        )
        if not updated:
            updated = Run.objects.filter(pk=current.pk, status=Run.Status.RUNNING).update(**flags)
        current.refresh_from_db()
        if not updated:
            raise RunNotCancellable(current)
        run_change_record(run=current)
        audit_record(
            actor=actor,
            action="run.cancel_request",
            target_type=RUN_TARGET,
            target_id=str(current.pk),
            before=before,
            after=_cancel_snapshot(current),
            reason=reason,
        )
    return current


def run_cancel_message(reason: str) -> str:
    """What a cancelled run's ``error`` (and the chat) says."""
    return f"Cancelled: {reason}" if reason.strip() else "Cancelled."
