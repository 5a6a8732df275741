"""Replays: the user messages that followed a fork point in the parent session, run again on
the fork, in order, one run at a time.

A :class:`~agentdash.runs.models.Replay` row is the plan: the messages, how many are
queued, the run queued last. The next message is queued (``run_enqueue``: an ordinary run,
on the timeline as any other) when the run queued last has succeeded and no run of the
session is queued, running or waiting for a confirmation — checked with the replay's row
locked, once a run's end commits (``lifecycle.run_ended_register``, on the committing
thread). A run of it that fails or is cancelled stops the replay; so does a message that
can no longer be queued (the agent is gone). A process that died between a run's end and
queueing the next leaves the replay to the reaper's next pass
(:func:`replays_resume_stalled`); ``replay_start`` asked again picks it up too.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from google.genai import types

from agentdash.agent_sessions.locks import session_lock
from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.core.permissions import is_operator
from agentdash.core.prepared import PreparedQuery
from agentdash.core.services import audit_record
from agentdash.runs.models import Replay, Run
from agentdash.runs.services import run_enqueue

logger = logging.getLogger(__name__)

REPLAY_TARGET = "runs.replay"
BLOCKING = (Run.Status.QUEUED, Run.Status.RUNNING, Run.Status.WAITING)
REPLAY_MESSAGES_MAX = 500


def replay_messages(*, fork: AgentSession) -> list[dict[str, Any]]:
    """What a replay of ``fork`` runs: the user-authored messages of its parent after the
    fork point, in order, each as a ``google.genai`` Content (its text and other non-call
    parts; confirmation answers and other function responses are left out). Raises
    ``ValidationError`` (key ``session``) when ``fork`` is not a fork or its parent is gone."""
    if fork.forked_from_seq is None:
        raise ValidationError({"session": ["only a fork can be replayed: fork a session first"]})
    if fork.parent_id is None:
        raise ValidationError(
            {"session": ["the session this one was forked from is deleted: nothing to replay"]}
        )
    rows = SessionEvent.objects.filter(
        session_id=fork.parent_id, seq__gt=fork.forked_from_seq, author="user"
    ).order_by("seq")
    found = []
    for data in rows.values_list("data", flat=True).iterator():
        parts = [p for p in (data.get("content") or {}).get("parts") or [] if is_question_part(p)]
        if parts:
            found.append({"role": "user", "parts": parts})
    return found


def is_question_part(part: dict[str, Any]) -> bool:
    """Whether a part of a user message is run again: text (not blank, not a thought) and
    files are; calls and responses (a confirmation's answer) are not."""
    if part.get("function_call") or part.get("function_response") or part.get("thought"):
        return False
    if "text" in part:
        return bool(str(part["text"] or "").strip())
    return bool(part.get("inline_data") or part.get("file_data"))


def replay_start(*, session: AgentSession, actor: Any) -> Replay:
    """Replay on fork ``session`` the user messages that followed its fork point in its
    parent (:func:`replay_messages`), one run at a time (see the module docstring); the first
    is queued at once unless a run of the session is still under way (then when it ends).
    Audited (``replay.start``). Returns the replay; its ``run_ids`` are the runs queued so far.

    Asked again while a replay of the session is active, it starts no other: the active one
    is returned, its next message queued if it was due. Only the session's owner or an
    operator may replay (``PermissionDenied``). Raises ``ValidationError`` (key ``session``)
    for a session that is not a fork, whose parent is gone or has nothing to replay, and as
    ``run_enqueue`` does; nothing is stored then."""
    owner = session.owner_id
    if not (is_operator(actor) or (owner is not None and owner == getattr(actor, "pk", None))):
        raise PermissionDenied("only the session's owner or an operator may replay it")
    with transaction.atomic():
        # The session's row serializes starts: two at once cannot both make a replay.
        session_lock(session_id=session.pk)
        active = _active(session.pk)
        if active is not None:
            _advance(active)
            return active
        messages = replay_messages(fork=session)
        if not messages:
            raise ValidationError(
                {"session": ["nothing to replay: no user message followed the fork point"]}
            )
        if len(messages) > REPLAY_MESSAGES_MAX:
            raise ValidationError(
                {"session": [f"at most {REPLAY_MESSAGES_MAX} messages can be replayed at once"]}
            )
        user = actor if getattr(actor, "is_authenticated", False) else None
        replay = Replay.objects.create(
            session=session, agent_name=session.app_name, messages=messages, requested_by=user
        )
        _advance(replay)
        audit_record(
            actor=actor,
            action="replay.start",
            target_type=REPLAY_TARGET,
            target_id=str(replay.pk),
            after={
                "session": session.pk,
                "parent": session.parent_id,
                "messages": len(messages),
                "runs": list(replay.run_ids),
            },
        )
    return replay


_ACTIVE_IN: PreparedQuery[int] = PreparedQuery(
    lambda session_id: Replay.objects.filter(
        session_id=session_id, status=Replay.Status.ACTIVE
    ).values_list("pk", flat=True)[:1]
)


def replay_continue(run: Run) -> None:
    """After ``run`` ended: queue the next message of its session's active replay if it is
    due, or end the replay (done, or stopped by a run that failed). Registered with
    ``lifecycle.run_ended_register``; never raises (a failure stops the replay, logged)."""
    active = Replay.objects.filter(session_id=run.session_id, status=Replay.Status.ACTIVE)
    try:
        if not _ACTIVE_IN.rows(run.session_id):  # most sessions: nothing to lock, no transaction
            return
        with transaction.atomic():
            replay = _active(run.session_id)
            if replay is not None:
                _advance(replay)
    except Exception as exc:
        logger.exception("replay of session %s: the next message was not queued", run.session_id)
        try:
            active.update(status=Replay.Status.STOPPED, error=f"{type(exc).__name__}: {exc}"[:2000])
        except Exception:
            logger.exception("replay of session %s could not be stopped", run.session_id)


def replays_resume_stalled() -> list[int]:
    """Advance the active replays whose run queued last is no longer under way (it ended
    and nobody queued the next message: the process that would have died first), as the end
    of that run would have; the ids of the replays that queued a run. Each is checked with
    its row locked, so a replay the end of its run advances at the same moment is advanced
    once. Run by every reaper pass; a replay that fails to advance is stopped, logged."""
    stalled = (
        Replay.objects.filter(status=Replay.Status.ACTIVE)
        .exclude(current_run__status__in=BLOCKING)
        .values_list("pk", flat=True)
    )
    resumed = []
    for replay_id in stalled:
        try:
            with transaction.atomic():
                replay = (
                    Replay.objects.select_for_update()
                    .filter(pk=replay_id, status=Replay.Status.ACTIVE)
                    .first()
                )
                if replay is not None and _advance(replay) is not None:
                    resumed.append(replay_id)
        except Exception as exc:
            logger.exception("replay %s: the next message was not queued", replay_id)
            Replay.objects.filter(pk=replay_id, status=Replay.Status.ACTIVE).update(
                status=Replay.Status.STOPPED, error=f"{type(exc).__name__}: {exc}"[:2000]
            )
    if resumed:
        logger.warning("replays %s were resumed: the end of their last run queued nothing",
                       resumed)  # fmt: skip
    return resumed


def _active(session_id: str) -> Replay | None:
    """The session's active replay, its row locked until the transaction ends."""
    found = (
        Replay.objects.select_for_update()
        .filter(session_id=session_id, status=Replay.Status.ACTIVE)
        .order_by("id")
        .first()
    )
    return found


def _advance(replay: Replay) -> Run | None:
    """Queue ``replay``'s next message if it is due (in the caller's transaction, the
    replay's row locked), or mark it done or stopped. Returns the run queued, if any."""
    current = (
        Run.objects.filter(pk=replay.current_run_id).values_list("status", flat=True).first()
        if replay.current_run_id is not None
        else None
    )
    if current in (Run.Status.FAILED, Run.Status.CANCELLED):
        replay.status = Replay.Status.STOPPED
        replay.error = f"run {replay.current_run_id} {current}: the replay stopped there"
        replay.save(update_fields=["status", "error"])
        return None
    if current in BLOCKING:
        return None  # still under way, or waiting for a confirmation
    if Run.objects.filter(session_id=replay.session_id, status__in=BLOCKING).exists():
        return None  # another run of the session: the next message waits for its end
    if replay.queued >= len(replay.messages):
        replay.status = Replay.Status.DONE
        replay.save(update_fields=["status"])
        return None
    run = run_enqueue(
        session=replay.session,
        agent_name=replay.agent_name,
        message=types.Content.model_validate(replay.messages[replay.queued]),
        requested_by=replay.requested_by,
    )
    replay.queued += 1
    replay.run_ids = [*replay.run_ids, run.pk]
    replay.current_run = run
    replay.save(update_fields=["queued", "run_ids", "current_run"])
    return run
