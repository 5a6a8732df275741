"""The writes people ask of runs: start one (queue it and hand it to the executor), stop one;
start a chat (a session with its first run), delete a session no run is using.

Both record the run's change seq in their transaction (a client sees them at once); a cancel
is audited. The worker's side of a run's life — claim, heartbeat, outcome — is in
:mod:`agentdash.runs.lifecycle`.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from google.genai import types

from agentdash.agent_sessions.locks import session_lock
from agentdash.agent_sessions.models import AgentSession
from agentdash.agent_sessions.services import (
    session_create,
    session_delete,
    session_first_message_record,
)
from agentdash.core.hygiene import value_problem
from agentdash.core.problems import ConflictError
from agentdash.core.services import Actor, audit_record
from agentdash.core.threads import in_worker_thread
from agentdash.registry.loader import AgentNotRegisteredError
from agentdash.registry.selectors import agent_get
from agentdash.runs.executors import executor_get, executor_start
from agentdash.runs.lifecycle import run_cancel_message, run_change_record
from agentdash.runs.models import Run
from agentdash.runs.selectors import ACTIVE
from agentdash.runs.turns import turn_first
from agentdash.runs.waits import waits_abandoned
from runtime.contexts.invocation_context import new_invocation_id

logger = logging.getLogger(__name__)

RUN_TARGET = "runs.run"


class RunNotCancellable(ConflictError):
    """The run has already finished: there is nothing left to cancel."""

    def __init__(self, run: Run) -> None:
        self.run = run
        super().__init__(
            f"Run {run.invocation_id} is {run.status}; only queued, waiting or running runs can be "
            "cancelled."
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
    data = types.Content(role="user", parts=parts).model_dump(mode="json", exclude_none=True)
    problem = value_problem(data)  # what a person sends is refused, not altered
    if problem:
        raise ValidationError({"message": [f"the message cannot be stored: {problem}"]})
    return data


def run_enqueue(
    *,
    session: AgentSession,
    agent_name: str,
    message: types.Content,
    requested_by: Actor,
    message_stored: bool = False,
    client_id: str = "",
) -> Run:
    """Queue a run of root agent ``agent_name`` answering ``message`` in ``session``.

    Creates the run (``queued``, a new invocation id) and its change seq in one transaction,
    in which the session's first message with text is also kept (and titles a session that
    has no title: ``session_first_message_record``); once that commits, the run id goes to
    the executor (and the change seq, as every one, is announced to the live pipeline).
    Raises ``ValidationError`` (keys ``agent_name``, ``session``, ``message``) when the agent
    is not configured, the session belongs to another app than the agent's, or the message is
    empty or holds what cannot be stored (NUL, a lone surrogate: ``core.hygiene``). Call it
    outside an event loop; async code uses :func:`arun_enqueue`.

    ``message_stored``: ``message`` is the session's last event already (a fork made at a
    question): the run answers it without appending it again.

    ``client_id``: the id the client gave the message. The same message sent again with it
    (its answer was lost with the socket) is the run queued the first time, not another; the
    same id with another message is a ``ValidationError`` (key ``client_id``).
    """
    agent_name = _agent_of(session, agent_name)
    data = _message_clean(message)
    user = requested_by if requested_by is not None and requested_by.is_authenticated else None
    text = " ".join(p.get("text", "") for p in data["parts"] if isinstance(p.get("text"), str))
    if client_id and (sent := _run_sent_before(session, client_id, data)) is not None:
        return sent
    try:
        with transaction.atomic():
            session_first_message_record(session_id=session.pk, text=text)
            run = Run.objects.create(
                session=session,
                agent_name=agent_name,
                invocation_id=new_invocation_id(),
                status=Run.Status.QUEUED,
                message=data,
                message_stored=message_stored,
                requested_by=user,
                queued_at=timezone.now(),
                client_id=client_id,
            )
            run_change_record(run=run, no_calls=True)
            run_id = run.pk
            transaction.on_commit(lambda: run_dispatch(run_id=run_id))
    except IntegrityError:
        # The same message sent twice at once: the other one's transaction queued it.
        if not client_id or (sent := _run_sent_before(session, client_id, data)) is None:
            raise
        return sent
    return run


def _agent_of(session: AgentSession, agent_name: str) -> str:
    """The name of the registered root agent ``agent_name`` whose app ``session`` is; a
    ``ValidationError`` (key ``agent_name`` or ``session``) otherwise."""
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
    return agent.name


def _run_sent_before(session: AgentSession, client_id: str, data: dict[str, Any]) -> Run | None:
    """The run queued for the message ``client_id`` names in ``session``, if one was; a
    ``ValidationError`` when that message is not ``data``."""
    sent = Run.objects.filter(session_id=session.pk, client_id=client_id).first()
    if sent is not None and sent.message != data:
        raise ValidationError(
            {"client_id": [f"client_id {client_id!r} names another message of this session"]}
        )
    return sent


async def arun_enqueue(
    *,
    session: AgentSession,
    agent_name: str,
    message: types.Content,
    requested_by: Actor,
    client_id: str = "",
) -> Run:
    """:func:`run_enqueue` for async code (a consumer): starts this process's executor on the
    running loop first (daphne has no lifespan), then enqueues from a worker thread."""
    await executor_start()
    enqueue = in_worker_thread(run_enqueue)
    run: Run = await enqueue(
        session=session,
        agent_name=agent_name,
        message=message,
        requested_by=requested_by,
        client_id=client_id,
    )
    return run


def session_start(
    *, agent_name: str, text: str, requested_by: Actor, session_id: str | None = None
) -> Run:
    """A chat's first message: a session of root agent ``agent_name`` owned by
    ``requested_by`` (a signed-in user), titled by ``text``, and the run answering ``text``,
    created together in one transaction (no session is left without its message) and audited
    as ``session.create``. Returns the run (``run.session`` is the session).

    ``session_id`` names the session (``None``: a new uuid hex). Raises ``ValidationError``
    as :func:`run_enqueue` does — nothing is stored then — ``SessionExistsError`` for a taken
    id and ``ValueError`` for an id outside the alphabet (``agent_sessions.ids``).
    """
    if requested_by is None or not requested_by.is_authenticated:
        raise ValidationError({"requested_by": ["a chat is started by a signed-in user"]})
    message = types.Content(role="user", parts=[types.Part(text=text)])
    with transaction.atomic():
        session = session_create(
            app_name=agent_name,
            user_id=str(requested_by.pk),
            owner=requested_by,
            session_id=session_id,
            actor=requested_by,
        )
        return run_enqueue(
            session=session, agent_name=agent_name, message=message, requested_by=requested_by
        )


class SessionBusy(Exception):
    """The session has a run queued or running: it cannot be deleted under it."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(
            "This session has a run in progress: cancel it or wait until it ends, then delete "
            "the session."
        )


def session_delete_idle(*, session_id: str, actor: Actor, reason: str = "") -> bool:
    """Delete the session and every row of it (``agent_sessions.services.session_delete``,
    audited as ``session.delete``) unless a run of it is queued or running: then
    :class:`SessionBusy`, and nothing changes. The session's row is locked first, so no run
    can be queued between the check and the deletion. Returns whether a session was
    deleted (``False``: it was already gone). Who may delete is the caller's question."""
    with transaction.atomic():
        found = session_lock(session_id=session_id)
        if not found:
            return False
        if Run.objects.filter(session_id=session_id, status__in=ACTIVE).exists():
            raise SessionBusy(session_id)
        return session_delete(session_id=session_id, actor=actor, reason=reason)


def run_dispatch(*, run_id: int) -> None:
    """Hand a committed queued run to the executor. A failure to submit is logged, not
    raised: the run stays queued and the reaper submits it again."""
    try:
        executor_get().submit(run_id)
    except Exception:
        logger.exception("could not submit run %s; the reaper will submit it again", run_id)


def turn_next(run: Run) -> None:
    """Hand the executor the queued run of ``run``'s session whose turn is next, once
    ``run`` ended (registered with ``run_ended_register``: :mod:`agentdash.runs.turns`)."""
    next_id = turn_first(run.session_id)
    if next_id is not None:
        run_dispatch(run_id=next_id)


def _cancel_snapshot(run: Run) -> dict[str, Any]:
    return {
        "status": run.status,
        "cancel_requested": run.cancel_requested,
        "cancel_reason": run.cancel_reason,
    }


def run_cancel_request(*, run: Run, actor: Actor, reason: str = "") -> Run:
    """Stop a queued, waiting or running run, with one ``run.cancel_request`` audit row, in one
    transaction. Returns the stored run.

    A queued run is cancelled at once (status ``cancelled``): no worker will claim it; so is
    one waiting for an approval (no worker holds it: its request is then answered by nobody,
    and an answer given later is refused as for any run no longer waiting). A
    running one gets ``cancel_requested`` and ``cancel_reason``; its worker sees them at its
    next heartbeat, stops the agent and ends the run ``cancelled``. Either is a change of the
    run (a seq).
    Asking again for a running run already asked to stop changes nothing and writes nothing;
    asking again for a queued one (its attempt was interrupted before it saw the request)
    cancels it.
    Raises :class:`RunNotCancellable` when the run has finished (even if it finished a moment
    ago: the update is conditional on the status in the database).
    """
    with transaction.atomic():
        # NO KEY: inserts that reference the run (its spans) need not wait for this lock.
        current = Run.objects.select_for_update(no_key=True).get(pk=run.pk)
        if current.status == Run.Status.RUNNING and current.cancel_requested:
            return current  # its worker stops it at its next heartbeat
        before = _cancel_snapshot(current)
        flags = {"cancel_requested": True, "cancel_reason": reason}
        stopped_now = (Run.Status.QUEUED, Run.Status.WAITING)
        updated = Run.objects.filter(pk=current.pk, status__in=stopped_now).update(
            **flags,
            status=Run.Status.CANCELLED,
            finished_at=timezone.now(),
            error=run_cancel_message(reason),
        )
        if updated:
            waits_abandoned(run_id=current.pk)  # a waiting run's questions go unanswered
        else:
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
