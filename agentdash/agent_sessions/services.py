"""Writes of sessions: creation, titles, deletion and operator edits of state.

Agent writes arrive through :class:`~agentdash.agent_sessions.session_service.
DjangoSessionService`; both paths append events through the same compare-and-swap
(``_state_store.event_append``), so operators and agents never overwrite each other unseen.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction

from agentdash.agent_sessions import ids
from agentdash.agent_sessions._state_store import (
    CurrentState,
    event_append,
    shared_state_apply,
    split_delta,
    state_normalize,
)
from agentdash.agent_sessions.errors import KeyConflict, StateConflictError
from agentdash.agent_sessions.event_data import event_serialize
from agentdash.agent_sessions.models import (
    OPERATOR_AUTHOR,
    AgentSession,
    MemoryRecord,
    SessionEvent,
    StoredArtifact,
)
from agentdash.agent_sessions.titles import first_message_of, title_clean, title_from_message
from agentdash.core.hygiene import storable
from agentdash.core.prepared import PreparedUpdate
from agentdash.core.services import audit_record
from runtime.events.event import Event
from runtime.events.event_actions import EventActions
from runtime.sessions.base_session_service import SessionExistsError
from runtime.sessions.state import State, scope_of


@dataclass(frozen=True)
class SessionStateUpdateResult:
    """An applied operator edit: the event it became and the merged state after it."""

    session_id: str
    event_id: str
    seq: int
    version: int
    state: dict[str, Any]


def session_create(
    *,
    app_name: str,
    user_id: str,
    state: dict[str, Any] | None = None,
    session_id: str | None = None,
    owner: Any = None,
    title: str = "",
    actor: Any = None,
) -> AgentSession:
    """Create a session; its initial ``state`` is stored by prefix (own keys on the session,
    ``user:``/``app:`` keys in their shared rows, ``temp:`` keys dropped), in one transaction.

    A blank ``session_id`` gets a new one (uuid hex). Raises ``SessionExistsError`` for a
    taken id and ``ValueError`` for an id outside the alphabet of
    :mod:`agentdash.agent_sessions.ids` (1–128 of ``A–Z a–z 0–9 . _ : -``). With an
    ``actor`` (someone acting in the dashboard) the creation is audited as
    ``session.create``.
    """
    session_id = ids.session_id_check((session_id or "").strip() or uuid.uuid4().hex)
    initial = state_normalize(state or {})
    with transaction.atomic():
        if AgentSession.objects.filter(pk=session_id).exists():
            raise SessionExistsError(f"session {session_id!r} already exists")
        try:
            with transaction.atomic():
                session = AgentSession.objects.create(
                    id=session_id,
                    app_name=app_name,
                    user_id=user_id,
                    owner=owner,
                    title=title,
                    state=split_delta(initial)["session"],
                    initial_state=split_delta(initial)["session"],
                    last_update_time=time.time(),
                )
        except IntegrityError:
            raise SessionExistsError(f"session {session_id!r} already exists") from None
        shared_state_apply(app_name=app_name, user_id=user_id, delta=initial)
        if actor is not None:
            audit_record(
                actor=actor,
                action="session.create",
                target_type="session",
                target_id=session_id,
                after={"app_name": app_name, "user_id": user_id, "state": initial},
            )
    return session


def session_delete(
    *,
    session_id: str,
    actor: Any = None,
    reason: str = "",
    app_name: str | None = None,
    user_id: str | None = None,
) -> bool:
    """Delete the session and every row of it, in one transaction: its events (the state's
    history), runs, spans, change log, callback switches, artifacts and memory records
    (only if it matches ``app_name``/``user_id`` when given). Returns whether one was
    deleted; a missing session is not an error. With an ``actor`` the deletion is audited as
    ``session.delete``: before = what was lost (its app, user, owner, title, version, state,
    and how many rows of each kind went)."""
    with transaction.atomic():
        sessions = AgentSession.objects.filter(pk=session_id)
        if app_name is not None:
            sessions = sessions.filter(app_name=app_name)
        if user_id is not None:
            sessions = sessions.filter(user_id=user_id)
        before = sessions.values(
            "app_name", "user_id", "owner__username", "title", "version", "event_count", "state"
        ).first()
        if before is None:
            return False
        # Rows that name the session by id rather than by a foreign key.
        own = {"app_name": before["app_name"], "user_id": before["user_id"]}
        _, artifacts = StoredArtifact.objects.filter(**own, session_id=session_id).delete()
        _, memories = MemoryRecord.objects.filter(**own, session_id=session_id).delete()
        # The rest go with the session (foreign keys with CASCADE, named by label in the apps
        # above this one: runs, spans, changes, controls).
        _, removed = sessions.delete()
        if actor is not None:
            recorded: dict[str, Any] = dict(before)
            recorded["owner"] = recorded.pop("owner__username")
            recorded["rows"] = {
                label: count
                for label, count in sorted({**removed, **artifacts, **memories}.items())
                if count
            }
            audit_record(
                actor=actor,
                action="session.delete",
                target_type="session",
                target_id=session_id,
                before=recorded,
                reason=reason,
            )
    return True


_FIRST_MESSAGE = PreparedUpdate(
    lambda session_id: AgentSession.objects.filter(pk=session_id, first_message=""),
    fields=("first_message",),
)
_FIRST_TITLE = PreparedUpdate(
    lambda session_id: AgentSession.objects.filter(pk=session_id, title=""), fields=("title",)
)


def session_first_message_record(*, session_id: str, text: str) -> bool:
    """Keep ``text`` as the session's first message (:mod:`~agentdash.agent_sessions.titles`)
    and, when the session has no title yet, make its title of it. Only the first message
    with text counts: once one is kept, later calls change nothing. Returns whether this one
    was kept."""
    first = first_message_of(text)
    if not first:
        return False
    kept = _FIRST_MESSAGE.update((first,), session_id)
    if kept:
        _FIRST_TITLE.update((title_from_message(text),), session_id)
    return bool(kept)


def session_title_update(*, session_id: str, title: str, actor: Any) -> str:
    """Rename the session (the title people typed, cleaned by
    :func:`~agentdash.agent_sessions.titles.title_clean`), audited as ``session.rename``
    with the old and new titles, in one transaction. Returns the stored title.

    Raises ``ValueError`` for a title that cannot be one (empty, too long, a NUL) and
    ``AgentSession.DoesNotExist`` for a missing session. Who may rename is the caller's
    question (the dashboard: the owner)."""
    cleaned = title_clean(title)
    with transaction.atomic():
        session = AgentSession.objects.select_for_update().get(pk=session_id)
        if session.title == cleaned:
            return cleaned
        before = session.title
        AgentSession.objects.filter(pk=session_id).update(title=cleaned)
        audit_record(
            actor=actor,
            action="session.rename",
            target_type="session",
            target_id=session_id,
            before={"title": before},
            after={"title": cleaned},
        )
    return cleaned


def session_state_update(
    *,
    session_id: str,
    delta: dict[str, Any],
    expected_version: int,
    actor: Any,
    reason: str,
    expected_app_version: int | None = None,
    expected_user_version: int | None = None,
) -> SessionStateUpdateResult:
    """An operator's edit of a session's state, based on what they saw at ``expected_version``.

    It becomes an event authored ``"operator"`` whose ``actions.state_delta`` is ``delta``,
    appended through the agents' compare-and-swap, with an audit row (``session.state.update``,
    before = the keys' previous values, ``None`` for absent ones) in the same transaction.

    Raises :class:`StateConflictError`, writing nothing, when a key of ``delta`` was changed by
    one of the session's events after ``expected_version`` — or, for ``app:``/``user:`` keys
    when ``expected_app_version``/``expected_user_version`` is given, by any write to that
    shared scope after it. Changes to other keys meanwhile do not block the edit. Raises
    ``ValueError`` for an empty delta, a ``temp:`` key, a value JSON cannot carry, a blank
    reason or an ``expected_version`` the session never reached; ``SessionNotFoundError`` for
    an unknown session.
    """
    _validate_edit(delta, reason, expected_version)
    event = Event(
        author=OPERATOR_AUTHOR,
        actions=EventActions(state_delta=dict(delta)),
        custom_metadata={"reason": reason.strip(), "actor": _label(actor)},
    )
    data = event_serialize(event)

    def check(current: CurrentState) -> None:
        _check_conflicts(
            current,
            set(delta),
            expected_version,
            {"app": expected_app_version, "user": expected_user_version},
        )

    with transaction.atomic():
        appended = event_append(session_id=session_id, event_data=data, check=check)
        audit_record(
            actor=actor,
            action="session.state.update",
            target_type="session",
            target_id=session_id,
            before={key: appended.previous_state.get(key) for key in delta},
            after=data["actions"]["state_delta"],
            reason=reason.strip(),
        )
    return SessionStateUpdateResult(
        session_id=session_id,
        event_id=event.id,
        seq=appended.seq,
        version=appended.version,
        state=appended.state,
    )


def session_state_mirror(*, session_id: str, author: str, delta: dict[str, Any]) -> int:
    """State an agent that runs elsewhere reports it has (``remote``): an event authored by
    the agent whose ``actions.state_delta`` is ``delta`` (made storable: values JSON cannot
    carry become their text), appended with no check — the app's state is what it is.
    Returns the session version it produced; ``SessionNotFoundError`` for an unknown
    session. An author that names a person (``operator``, ``user``) is marked as the app's:
    an agent's report never passes for an operator's edit."""
    values, _ = storable(json.loads(json.dumps(delta, default=str)))
    author = author.strip()[:120] or "agent"
    if author in (OPERATOR_AUTHOR, "user"):
        author = f"{author} (app)"
    event = Event(
        author=author,
        actions=EventActions(
            state_delta={k: v for k, v in values.items() if not k.startswith(State.TEMP_PREFIX)}
        ),
    )
    appended = event_append(session_id=session_id, event_data=event_serialize(event))
    return appended.version


def _validate_edit(delta: Any, reason: Any, expected_version: Any) -> None:
    if not isinstance(delta, dict) or not delta:
        raise ValueError("the state edit is empty: give at least one key and value")
    for key, value in delta.items():
        if not isinstance(key, str) or not key.strip():
            raise ValueError(f"state keys must be non-empty strings, got {key!r}")
        if key.startswith(State.TEMP_PREFIX):
            raise ValueError(
                f"key {key!r} is a temp: key: temp: keys live for one invocation only and are "
                "never stored, so an operator cannot set them"
            )
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"the value of key {key!r} is not JSON-serializable: {exc}") from exc
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError("a reason is required: say why the state is being changed")
    if isinstance(expected_version, bool) or not isinstance(expected_version, int):
        raise ValueError(f"expected_version must be an integer, got {expected_version!r}")
    if expected_version < 0:
        raise ValueError(f"expected_version must not be negative, got {expected_version}")


def _check_conflicts(
    current: CurrentState,
    keys: set[str],
    expected_version: int,
    expected_shared: dict[str, int | None],
) -> None:
    if expected_version > current.version:
        raise ValueError(
            f"expected_version {expected_version} is ahead of session "
            f"{current.session_id!r}, which is at version {current.version}"
        )
    merged = current.merged
    changed_at: dict[str, int] = {}
    if current.version > expected_version:
        changes = SessionEvent.objects.filter(
            session_id=current.session_id, version__gt=expected_version
        ).values_list("version", "state_delta_keys")
        for version, changed_keys in changes:
            for key in keys.intersection(changed_keys):
                changed_at[key] = max(version, changed_at.get(key, 0))
    conflicts = [
        KeyConflict(
            key=key,
            current_value=merged.get(key),
            scope="session",
            seen_version=expected_version,
            changed_at_version=at,
            current_version=current.version,
        )
        for key, at in sorted(changed_at.items())
    ]
    for scope, row in (("app", current.app), ("user", current.user)):
        seen = expected_shared[scope]
        if seen is None:
            continue
        for key in sorted(k for k in keys if scope_of(k) == scope and k not in changed_at):
            at = row.key_versions.get(key, 0)
            if at > seen:
                conflicts.append(
                    KeyConflict(
                        key=key,
                        current_value=merged.get(key),
                        scope=scope,
                        seen_version=seen,
                        changed_at_version=at,
                        current_version=row.version,
                    )
                )
    if conflicts:
        raise StateConflictError(session_id=current.session_id, conflicts=conflicts)


def _label(actor: Any) -> str:
    if actor is not None and getattr(actor, "is_authenticated", False):
        return str(actor.get_username())
    return "system"
