"""The compare-and-swap write path shared by the session service and the operator services.

Every change to a session's stored state is an event appended by :func:`event_append`. One
attempt is one transaction (a savepoint when the caller already holds one): read the session
row at version V, compute, ``UPDATE … SET state, version=V+1, event_count, last_update_time
WHERE id=… AND version=V``, insert the event, then the same compare-and-swap on the
``AppState``/``UserState`` rows the delta touches. A swap that matches no row means another
writer committed first: the attempt is rolled back and redone from a fresh read, re-applying
the event's *key-level* delta to the fresh state, so concurrent writers never lose an update.

On SQLite (``transaction_mode=IMMEDIATE``) writers queue at BEGIN and a swap never misses; on
PostgreSQL (READ COMMITTED) a losing UPDATE waits for the winner's commit, then matches no row
and the attempt is redone. A redo reads its rows ``FOR NO KEY UPDATE``: the first attempt stays
lock-free, and a writer that lost once cannot lose again however many writers pile up (pure
optimistic retries could starve one of them). Rows are always touched in the order session →
app → user, so writers cannot deadlock on them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db import IntegrityError, connection, transaction
from pydantic_core import to_jsonable_python

from agentdash.agent_sessions.change_items import event_item
from agentdash.agent_sessions.errors import ConcurrentUpdateError
from agentdash.agent_sessions.event_data import event_text
from agentdash.agent_sessions.models import AgentSession, AppState, SessionEvent, UserState
from agentdash.changes.announcements import ItemsMade, announce_on_commit
from agentdash.changes.bulk import rows_insert
from agentdash.changes.models import SessionChange
from agentdash.changes.services import session_change_next
from agentdash.core.hygiene import storable
from agentdash.core.prepared import PreparedUpdate
from agentdash.core.rendering import render_untrusted
from runtime.sessions.base_session_service import SessionNotFoundError
from runtime.sessions.state import scope_of, without_temp

MAX_ATTEMPTS = 5
_SCOPE_FIELDS = ("id", "state", "version", "key_versions")


class _CasMiss(Exception):
    """A compare-and-swap matched no row: someone committed first. The attempt is redone."""


@dataclass(frozen=True)
class ScopeRow:
    """An ``AppState``/``UserState`` row as read (``id`` is ``None`` when there is none)."""

    id: int | None = None
    state: dict[str, Any] = field(default_factory=dict)
    version: int = 0
    key_versions: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class CurrentState:
    """What a write attempt read, handed to its ``check`` before anything is written."""

    session_id: str
    app_name: str
    user_id: str
    version: int
    event_count: int
    own: dict[str, Any]
    app: ScopeRow
    user: ScopeRow

    @property
    def merged(self) -> dict[str, Any]:
        return {**self.app.state, **self.user.state, **self.own}


@dataclass(frozen=True)
class Appended:
    """The outcome of :func:`event_append`: where the event landed and the state around it."""

    seq: int
    version: int
    last_update_time: float
    state: dict[str, Any]
    previous_state: dict[str, Any]


Check = Callable[[CurrentState], None]


def state_normalize(state: Mapping[str, Any]) -> dict[str, Any]:
    """``state`` converted the way events convert it (tuples → lists, …), ``temp:`` dropped,
    made storable (``core.hygiene.storable``: what a caller passes may come from an agent)."""
    normalized, _ = storable(without_temp(to_jsonable_python(dict(state))))
    return dict(normalized)


def split_delta(delta: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``delta`` split by scope into ``session``/``user``/``app``; ``temp:`` keys dropped."""
    parts: dict[str, dict[str, Any]] = {"session": {}, "user": {}, "app": {}}
    for key, value in delta.items():
        scope = scope_of(key)
        if scope != "temp":
            parts[scope][key] = value
    return parts


def event_append(
    *,
    session_id: str,
    event_data: dict[str, Any],
    app_name: str | None = None,
    user_id: str | None = None,
    check: Check | None = None,
) -> Appended:
    """Store ``event_data`` (from ``event_data.event_serialize``) as the session's next event and
    apply its state delta, all in one transaction; a lost compare-and-swap redoes the write
    on fresh rows read ``FOR NO KEY UPDATE``. The event also gets the session's next change seq
    (``changes.SessionChange``, kind ``event``) in that transaction.

    ``app_name``/``user_id``, when given, must match the session. ``check`` runs inside each
    attempt after the reads and may raise to refuse the write (nothing is written then).
    Raises ``SessionNotFoundError`` for an unknown session and :class:`ConcurrentUpdateError`
    after ``MAX_ATTEMPTS`` lost swaps.
    """
    html = render_untrusted(event_text(event_data))  # once, and outside the transaction
    for attempt in range(MAX_ATTEMPTS):
        try:
            with transaction.atomic():
                return _append_once(
                    session_id, event_data, html, app_name, user_id, check, attempt > 0
                )
        except _CasMiss:
            continue
    raise ConcurrentUpdateError(
        f"session {session_id!r}: another writer won the compare-and-swap {MAX_ATTEMPTS} "
        "times in a row; the event was not stored"
    )


def shared_state_apply(*, app_name: str, user_id: str, delta: Mapping[str, Any]) -> None:
    """Apply the ``app:`` and ``user:`` keys of ``delta`` to their shared rows (created on
    first use), with the same compare-and-swap and retries as :func:`event_append`."""
    parts = split_delta(delta)
    if not parts["app"] and not parts["user"]:
        return
    for attempt in range(MAX_ATTEMPTS):
        lock = attempt > 0
        try:
            with transaction.atomic():
                if parts["app"]:
                    lookup: dict[str, str] = {"app_name": app_name}
                    row = _scope_read(AppState, lookup, True, lock)
                    _scope_swap(AppState, row, parts["app"])
                if parts["user"]:
                    lookup = {"app_name": app_name, "user_id": user_id}
                    row = _scope_read(UserState, lookup, True, lock)
                    _scope_swap(UserState, row, parts["user"])
            return
        except _CasMiss:
            continue
    raise ConcurrentUpdateError(f"shared state of {app_name}/{user_id}: too much contention")


def _current_state(
    session_id: str, row: dict[str, Any], parts: dict[str, dict[str, Any]], lock: bool
) -> CurrentState:
    """The session's state as read (``row``), with its app's and user's shared state read
    (locked when ``lock``) where the delta's ``parts`` change them."""
    app_lookup = {"app_name": row["app_name"]}
    user_lookup = {"app_name": row["app_name"], "user_id": row["user_id"]}
    app, user = row.get(JOINED_APP), row.get(JOINED_USER)  # read with the row, unlocked
    if app is None or parts["app"]:
        app = _scope_read(AppState, app_lookup, bool(parts["app"]), lock)
    if user is None or parts["user"]:
        user = _scope_read(UserState, user_lookup, bool(parts["user"]), lock)
    return CurrentState(
        session_id=session_id,
        app_name=row["app_name"],
        user_id=row["user_id"],
        version=row["version"],
        event_count=row["event_count"],
        own=row["state"],
        app=app,
        user=user,
    )


_SESSION_SWAP = PreparedUpdate(
    lambda session_id, version: AgentSession.objects.filter(pk=session_id, version=version),
    fields=("state", "version", "event_count", "last_update_time"),
)


def _append_once(
    session_id: str,
    event_data: dict[str, Any],
    html: str,
    app_name: str | None,
    user_id: str | None,
    check: Check | None,
    lock: bool,
) -> Appended:
    row = _read_session(session_id, app_name, user_id, lock)
    if row is None:
        raise SessionNotFoundError(f"session {session_id!r} does not exist")
    delta: dict[str, Any] = event_data.get("actions", {}).get("state_delta") or {}
    parts = split_delta(delta)
    current = _current_state(session_id, row, parts, lock)
    if check is not None:
        check(current)

    version = current.version + 1
    seq = current.event_count + 1
    own = {**current.own, **parts["session"]}
    now = max(time.time(), float(event_data.get("timestamp") or 0), row["last_update_time"])
    swapped = _SESSION_SWAP.update((own, version, seq, now), session_id, current.version)
    if not swapped:
        raise _CasMiss
    row = SessionEvent(
        session_id=session_id,
        seq=seq,
        event_id=event_data["id"],
        invocation_id=event_data.get("invocation_id") or "",
        author=event_data["author"],
        timestamp=event_data["timestamp"],
        version=version,
        state_delta_keys=sorted(delta),
        data=event_data,
        html=html,
    )
    # One plain INSERT of the row (not ``save()``'s per-field work); it is not read back.
    values = [getattr(row, name) for name in _EVENT_FIELDS]
    rows_insert(model=SessionEvent, fields=_EVENT_FIELDS, rows=[values])
    # The session's change log, in the event's transaction: live clients catch up from it.
    # Announced with its item, made from the row just stored: the publisher need not read
    # it back.
    change = session_change_next(
        session_id=session_id, kind=SessionChange.Kind.EVENT, ref=event_data["id"], announce=False
    )
    announce_on_commit(session_id, change, items=ItemsMade([_event_change(change, row)]))
    app_state = _scope_swap(AppState, current.app, parts["app"])
    user_state = _scope_swap(UserState, current.user, parts["user"])
    return Appended(
        seq=seq,
        version=version,
        last_update_time=now,
        state={**app_state, **user_state, **own},
        previous_state=current.merged,
    )


_EVENT_FIELDS = (
    "session_id", "seq", "event_id", "invocation_id", "author", "timestamp", "version",
    "state_delta_keys", "data", "html",
)  # fmt: skip


def _event_change(seq: int, row: SessionEvent) -> dict[str, Any]:
    return {"seq": seq, "kind": SessionChange.Kind.EVENT, "data": event_item(row)}


def _read_session(
    session_id: str, app_name: str | None, user_id: str | None, lock: bool = False
) -> Any:
    """The session's row (``_SESSION_FIELDS``), or ``None``. Unlocked, its app's and user's
    shared rows come with it, in the same statement (under ``JOINED_APP`` and
    ``JOINED_USER``; left joins: a shared row may not exist yet); locked
    (``FOR NO KEY UPDATE``), the session's row alone."""
    if not lock:
        return session_read_joined(session_id, app_name, user_id)
    sessions = AgentSession.objects.filter(pk=session_id).select_for_update(no_key=True)
    if app_name is not None:
        sessions = sessions.filter(app_name=app_name)
    if user_id is not None:
        sessions = sessions.filter(user_id=user_id)
    return sessions.values(*_SESSION_FIELDS).first()


_SESSION_FIELDS = ("app_name", "user_id", "state", "version", "event_count", "last_update_time")
JOINED_APP, JOINED_USER = "joined_app", "joined_user"


def session_read_joined(session_id: str, app_name: str | None, user_id: str | None) -> Any:
    """The session's row (``_SESSION_FIELDS``, of that app and user when given) with its
    app's and user's shared rows (``ScopeRow`` under ``JOINED_APP`` and ``JOINED_USER``),
    in one statement; ``None`` when there is no such session."""
    quote = connection.ops.quote_name
    tables = [quote(m._meta.db_table) for m in (AgentSession, AppState, UserState)]
    columns = [f"s.{quote(f)}" for f in _SESSION_FIELDS] + [
        f"{alias}.{quote(f)}" for alias in ("a", "u") for f in _SCOPE_FIELDS
    ]
    app, user = quote("app_name"), quote("user_id")
    sql = (
        f"SELECT {', '.join(columns)} FROM {tables[0]} s "
        f"LEFT JOIN {tables[1]} a ON a.{app} = s.{app} "
        f"LEFT JOIN {tables[2]} u ON u.{app} = s.{app} AND u.{user} = s.{user} "
        f"WHERE s.{quote('id')} = %s"
    )
    params: list[Any] = [session_id]
    for name, value in (("app_name", app_name), ("user_id", user_id)):
        if value is not None:
            sql += f" AND s.{quote(name)} = %s"
            params.append(value)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        found = cursor.fetchone()
    if found is None:
        return None
    row: dict[str, Any] = dict(zip(_SESSION_FIELDS, found[:6], strict=True))
    row["state"] = _json(row["state"])
    for key, start in ((JOINED_APP, 6), (JOINED_USER, 10)):
        scope = dict(zip(_SCOPE_FIELDS, found[start : start + 4], strict=True))
        if scope["id"] is None:
            row[key] = ScopeRow()
            continue
        for name in ("state", "key_versions"):
            scope[name] = _json(scope[name])
        row[key] = ScopeRow(**scope)
    return row


def _json(value: Any) -> Any:
    """A JSON column's value as a raw read hands it: text (SQLite; PostgreSQL's jsonb, as
    Django has its driver load it) or already decoded."""
    return json.loads(value) if isinstance(value, str | bytes) else value


def _scope_read(
    model: type[AppState | UserState], lookup: dict[str, Any], create: bool, lock: bool = False
) -> ScopeRow:
    rows = model._default_manager.all()
    if lock:
        rows = rows.select_for_update(no_key=True)
    if create:
        try:
            # get_or_create re-reads after losing a creation race (its insert is in a
            # savepoint); if even that fails, redo the whole attempt.
            obj, _ = rows.get_or_create(**lookup)
        except IntegrityError:
            raise _CasMiss from None
        return ScopeRow(
            id=obj.pk,
            state=obj.state,
            version=obj.version,
            key_versions=obj.key_versions,
        )
    found = rows.filter(**lookup).values(*_SCOPE_FIELDS).first()
    return ScopeRow(**found) if found else ScopeRow()


def _scope_swap(
    model: type[AppState | UserState], row: ScopeRow, delta: dict[str, Any]
) -> dict[str, Any]:
    if not delta:
        return row.state
    assert row.id is not None  # read with create=True: the row of a non-empty delta exists
    version = row.version + 1
    state = {**row.state, **delta}
    key_versions = {**row.key_versions, **dict.fromkeys(delta, version)}
    swapped = model._default_manager.filter(pk=row.id, version=row.version).update(
        state=state, version=version, key_versions=key_versions
    )
    if not swapped:
        raise _CasMiss
    return state
