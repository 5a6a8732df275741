"""Forks: a new session made of another's events up to one of them, with the state as of it.

A fork at the parent's event ``k`` holds copies of the parent's first ``k`` stored events (the
same ids, invocations, authors, data and rendered text, positions 1..k), its own state is
the parent's *as of* event ``k`` — its initial keys with the session-scope keys of those
events' deltas applied in order — and it points at its parent (``parent``,
``forked_from_event``, ``forked_from_seq``). ``app:`` and ``user:`` state is shared, not
copied: the fork keeps the parent's app and runtime user, so it sees the same shared rows.
An edited state becomes one operator event after the copies (``session_state_update``), so
the fork's history says what was changed, by whom and why.

Callback switches belong to ``controls``, above this app: copying them is the caller's part
(``runs.forks.fork_create`` does both in one transaction).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from agentdash.agent_sessions.event_data import event_text
from agentdash.agent_sessions.models import AgentSession, SessionEvent, StoredArtifact
from agentdash.agent_sessions.services import session_state_update
from agentdash.agent_sessions.titles import (
    TITLE_MAX_CHARS,
    first_message_of,
    text_one_line,
    text_shortened,
)
from agentdash.changes.models import SessionChange
from agentdash.changes.services import seqs_take, session_changes_insert
from agentdash.core.hygiene import value_problem
from agentdash.core.permissions import PermissionRequired, can_edit_state, is_operator
from agentdash.core.services import audit_record
from runtime.sessions.state import scope_of

FORK_ACTION = "session.fork"
STATE_EDIT_REASON = "state edited when forking from session {parent} at event {seq}"
STATE_KEYS_MAX = 1000


def session_state_at(*, session: AgentSession, seq: int) -> dict[str, Any]:
    """The session's own (session-scope) state as of its event ``seq``: its initial keys,
    then the session-scope keys of the deltas of its events 1..``seq``, in order.

    Sessions stored before their initial state was kept (``initial_state`` is ``None``) are
    taken to have started with the keys of their state that no event ever set."""
    changes = list(
        SessionEvent.objects.filter(session_id=session.pk)
        .order_by("seq")
        .values_list("seq", "state_delta_keys")
    )
    state = dict(_initial_state(session, changes))
    wanted = [s for s, keys in changes if s <= seq and any(scope_of(k) == "session" for k in keys)]
    for position in range(0, len(wanted), 500):
        deltas = SessionEvent.objects.filter(
            session_id=session.pk, seq__in=wanted[position : position + 500]
        ).order_by("seq")
        for data in deltas.values_list("data", flat=True):
            delta = (data.get("actions") or {}).get("state_delta") or {}
            state.update({k: v for k, v in delta.items() if scope_of(k) == "session"})
    return state


def _initial_state(session: AgentSession, changes: list[tuple[int, list[str]]]) -> dict[str, Any]:
    if session.initial_state is not None:
        return dict(session.initial_state)
    set_by_events = {key for _, keys in changes for key in keys}
    return {k: v for k, v in session.state.items() if k not in set_by_events}


def fork_state_clean(value: Any) -> dict[str, Any]:
    """A state edit for a fork as a person gave it: a JSON object of session-scope keys.

    Raises ``ValidationError`` (key ``state``) for anything else: not an object, too many
    keys, a blank key, an ``app:``/``user:`` key (shared with other sessions: a fork does not
    change them), a ``temp:`` key (never stored), or a value the database cannot store (a
    NUL, a lone surrogate, nested too deep, a non-finite number)."""
    if not isinstance(value, Mapping):
        raise ValidationError({"state": ["must be a JSON object: the session's keys and values"]})
    if len(value) > STATE_KEYS_MAX:
        raise ValidationError({"state": [f"at most {STATE_KEYS_MAX} keys"]})
    problem = value_problem(dict(value))
    if problem:
        raise ValidationError({"state": [f"cannot be stored: {problem}"]})
    for key in value:
        if not isinstance(key, str) or not key.strip():
            raise ValidationError({"state": ["keys must be non-empty strings"]})
        scope = scope_of(key)
        if scope in ("app", "user"):
            raise ValidationError(
                {
                    "state": [
                        f"key {key!r} is {scope}-scoped: {scope}: state is shared with other "
                        "sessions, so a fork leaves it as it is; edit the session's own keys"
                    ]
                }
            )
        if scope == "temp":
            raise ValidationError(
                {"state": [f"key {key!r} is a temp: key: temp: keys are never stored"]}
            )
    try:
        json.dumps(dict(value), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValidationError({"state": [f"cannot be stored as JSON: {exc}"]}) from None
    return dict(value)


def _changed(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of ``after`` whose value differs from ``before``'s (compared as JSON, so
    ``1`` and ``true`` differ)."""

    def same(key: str) -> bool:
        if key not in before:
            return False
        dump = json.dumps(before[key], sort_keys=True)
        return dump == json.dumps(after[key], sort_keys=True)

    return {key: value for key, value in after.items() if not same(key)}


def session_fork(
    *,
    parent: AgentSession,
    event_id: str,
    actor: Any,
    state: Mapping[str, Any] | None = None,
) -> AgentSession:
    """A new session (a uuid hex id) forked from ``parent`` at its event ``event_id``: the
    parent's events up to and including it, copied in order, and its state as of it (see
    the module docstring), owned by ``actor``, in one transaction with the change log's
    entries for the copied events and an audit row (``session.fork``).

    ``state`` (session-scope keys, :func:`fork_state_clean`) is merged over the state as of
    the event; the keys it changes are applied as one operator event
    (``session.state.update``, audited). Keys it leaves out keep their value: ADK state has no
    deletion.

    Only the parent's owner or an operator may fork it (``PermissionDenied``), and only
    someone who may edit state may fork with an edited state (``PermissionDenied``). Raises
    ``ValidationError`` (keys ``event_id``, ``state``) for an event the parent does not have
    or a state that cannot be one; nothing is stored then.
    """
    if not getattr(actor, "is_authenticated", False):
        raise PermissionDenied("log in to fork a session")
    if not (is_operator(actor) or (parent.owner_id is not None and parent.owner_id == actor.pk)):
        raise PermissionDenied("only the session's owner or an operator may fork it")
    if state is not None and not can_edit_state(actor):
        raise PermissionRequired(
            "agent_sessions.edit_session_state", "forking with an edited state is not allowed"
        )
    edit = fork_state_clean(state) if state is not None else {}
    point = (
        SessionEvent.objects.filter(session_id=parent.pk, event_id=event_id).values("seq").first()
        if isinstance(event_id, str) and event_id
        else None
    )
    if point is None:
        raise ValidationError({"event_id": ["this session has no event with that id"]})
    seq = int(point["seq"])
    with transaction.atomic():
        fork = _fork_copy(parent, event_id, seq, actor)
        changed = _changed(fork.state, edit)
        if changed:
            session_state_update(
                session_id=fork.pk,
                delta=changed,
                expected_version=fork.version,
                actor=actor,
                reason=STATE_EDIT_REASON.format(parent=parent.pk, seq=seq),
            )
            fork.refresh_from_db()
        audit_record(
            actor=actor,
            action=FORK_ACTION,
            target_type="session",
            target_id=fork.pk,
            before={"parent": parent.pk, "event_id": event_id, "seq": seq},
            after={"session": fork.pk, "events": seq, "state_edit": changed},
        )
    return fork


def fork_title(parent: AgentSession) -> str:
    """What the sessions list calls a fork of ``parent``."""
    name = parent.title or parent.first_message or parent.pk
    return text_shortened(text_one_line(f"Fork of {name}"), TITLE_MAX_CHARS)


def _fork_copy(parent: AgentSession, event_id: str, seq: int, actor: Any) -> AgentSession:
    rows = list(SessionEvent.objects.filter(session_id=parent.pk, seq__lte=seq).order_by("seq"))
    changes = list(
        SessionEvent.objects.filter(session_id=parent.pk)
        .order_by("seq")
        .values_list("seq", "state_delta_keys")
    )
    first = next(
        (text for row in rows if row.author == "user" and (text := event_text(row.data)).strip()),
        "",
    )
    fork = AgentSession.objects.create(
        id=uuid.uuid4().hex,
        app_name=parent.app_name,
        user_id=parent.user_id,
        owner=actor,
        title=fork_title(parent),
        first_message=first_message_of(first) if first else "",
        state=session_state_at(session=parent, seq=seq),
        initial_state=_initial_state(parent, changes),
        version=len(rows),
        event_count=len(rows),
        last_update_time=time.time(),
        parent=parent,
        forked_from_event=event_id,
        forked_from_seq=seq,
    )
    SessionEvent.objects.bulk_create(
        [
            SessionEvent(
                session=fork,
                seq=position,
                event_id=row.event_id,
                invocation_id=row.invocation_id,
                author=row.author,
                timestamp=row.timestamp,
                version=position,
                state_delta_keys=row.state_delta_keys,
                data=row.data,
                html=row.html,
            )
            for position, row in enumerate(rows, start=1)
        ],
        batch_size=500,
    )
    if rows:
        start = seqs_take({fork.pk: len(rows)})[fork.pk]
        session_changes_insert(
            kind=SessionChange.Kind.EVENT,
            changes=[(fork.pk, start + i, row.event_id) for i, row in enumerate(rows)],
        )
    _artifacts_copy(parent, fork, rows)
    return fork


def _artifacts_copy(parent: AgentSession, fork: AgentSession, rows: list[SessionEvent]) -> None:
    """The parent's session artifacts in the versions the copied events had saved."""
    latest: dict[str, int] = {}
    for row in rows:
        delta = (row.data.get("actions") or {}).get("artifact_delta") or {}
        for name, version in delta.items():
            if isinstance(version, int):
                latest[name] = max(version, latest.get(name, -1))
    if not latest:
        return
    own = {"app_name": parent.app_name, "user_id": parent.user_id}
    found = StoredArtifact.objects.filter(**own, session_id=parent.pk, filename__in=list(latest))
    StoredArtifact.objects.bulk_create(
        [
            StoredArtifact(
                **own,
                session_id=fork.pk,
                filename=artifact.filename,
                version=artifact.version,
                part=artifact.part,
            )
            for artifact in found
            if artifact.version <= latest[artifact.filename]
        ]
    )
