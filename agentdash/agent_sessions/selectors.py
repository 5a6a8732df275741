"""Reads of sessions, their events and state; the user-facing ones go through permissions."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404

from agentdash.agent_sessions._state_store import JOINED_APP, JOINED_USER, session_read_joined
from agentdash.agent_sessions.change_items import event_item
from agentdash.agent_sessions.models import (
    OPERATOR_AUTHOR,
    AgentSession,
    AppState,
    SessionEvent,
    UserState,
)
from agentdash.core.permissions import is_operator
from agentdash.core.prepared import PreparedQuery
from runtime.events.event import Event
from runtime.sessions.base_session_service import GetSessionConfig, SessionNotFoundError
from runtime.sessions.session import Session

_SESSION_FIELDS = ("id", "app_name", "user_id", "state", "version", "event_count")


@dataclass(frozen=True)
class SessionStateView:
    """A session's merged state and the versions an edit of it must be based on."""

    session_id: str
    state: dict[str, Any]
    version: int
    app_version: int
    user_version: int
    event_count: int


def session_list_for_user(*, user: Any) -> QuerySet[AgentSession]:
    """Sessions ``user`` may see, newest first: every session for operators, their own for
    everyone else, none for anonymous users."""
    sessions = AgentSession.objects.select_related("owner").order_by("-last_update_time")
    if not getattr(user, "is_authenticated", False):
        return sessions.none()
    if is_operator(user):
        return sessions
    return sessions.filter(owner=user)


def session_get_for_user(*, user: Any, session_id: str) -> AgentSession:
    """The session, if ``user`` may see it. Raises ``PermissionDenied`` for anonymous users and
    ``Http404`` for a missing session *or* someone else's (so ids are not confirmed)."""
    if not getattr(user, "is_authenticated", False):
        raise PermissionDenied("log in to see sessions")
    found = session_list_for_user(user=user).filter(pk=session_id).first()
    if found is None:
        raise Http404("no such session")
    return found


def session_events(
    *,
    session_id: str,
    after_seq: int = 0,
    invocation_id: str | None = None,
    author: str | None = None,
) -> QuerySet[SessionEvent]:
    """The session's stored events after ``after_seq``, in order, optionally only one
    invocation's or one author's. ``event_from_row`` turns a row back into an ``Event``."""
    events = SessionEvent.objects.filter(session_id=session_id, seq__gt=after_seq)
    if invocation_id is not None:
        events = events.filter(invocation_id=invocation_id)
    if author is not None:
        events = events.filter(author=author)
    return events.order_by("seq")


def event_from_row(row: SessionEvent) -> Event:
    return Event.model_validate(row.data)


def session_state_view(*, session_id: str) -> SessionStateView:
    """The merged state (app, then user, then the session's own keys) with the session's
    version and its shared scopes' versions. Raises ``SessionNotFoundError``."""
    row = AgentSession.objects.filter(pk=session_id).values(*_SESSION_FIELDS).first()
    if row is None:
        raise SessionNotFoundError(f"session {session_id!r} does not exist")
    app = AppState.objects.filter(app_name=row["app_name"]).values("state", "version").first()
    user = (
        UserState.objects.filter(app_name=row["app_name"], user_id=row["user_id"])
        .values("state", "version")
        .first()
    )
    app = app or {"state": {}, "version": 0}
    user = user or {"state": {}, "version": 0}
    return SessionStateView(
        session_id=session_id,
        state={**app["state"], **user["state"], **row["state"]},
        version=row["version"],
        app_version=app["version"],
        user_version=user["version"],
        event_count=row["event_count"],
    )


_EVENTS_DATA: PreparedQuery[dict[str, Any]] = PreparedQuery(
    lambda session_id, last: (
        SessionEvent.objects.filter(session_id=session_id, seq__lte=last)
        .order_by("seq")
        .values_list("data", flat=True)
    )
)


def session_snapshot(
    *,
    session_id: str,
    app_name: str,
    user_id: str,
    config: GetSessionConfig | None = None,
) -> Session | None:
    """The runtime ``Session`` (merged state, stored events) or ``None`` when the session does
    not exist in that app for that user. Events are read up to the row's ``event_count``, so
    they match the own state read with them even while writers append."""
    row = session_read_joined(session_id, app_name, user_id)  # with its shared rows
    if row is None:
        return None
    after = config.after_timestamp if config is not None else None
    recent = config.num_recent_events if config is not None else None
    data: list[dict[str, Any]]
    if after is None and recent is None:  # the runner's every read
        data = _EVENTS_DATA.rows(session_id, row["event_count"])
    elif recent is not None and recent <= 0:
        data = []
    else:
        events = SessionEvent.objects.filter(session_id=session_id, seq__lte=row["event_count"])
        if after is not None:
            events = events.filter(timestamp__gt=after)
        if recent is not None:
            newest = events.order_by("-seq").values_list("data", flat=True)
            data = list(newest[:recent])[::-1]
        else:
            data = list(events.order_by("seq").values_list("data", flat=True))
    shared = {**row[JOINED_APP].state, **row[JOINED_USER].state}
    return Session(
        id=session_id,
        app_name=app_name,
        user_id=user_id,
        state={**shared, **row["state"]},
        events=[Event.model_validate(d) for d in data],
        last_update_time=row["last_update_time"],
    )


def session_snapshots(*, app_name: str, user_id: str | None = None) -> list[Session]:
    """The app's sessions (one user's when ``user_id`` is given), merged state, no events."""
    rows = AgentSession.objects.filter(app_name=app_name)
    if user_id is not None:
        rows = rows.filter(user_id=user_id)
    found = list(rows.order_by("last_update_time").values(*_SESSION_FIELDS, "last_update_time"))
    shared = _shared_states(app_name, sorted({r["user_id"] for r in found}))
    return [
        Session(
            id=r["id"],
            app_name=app_name,
            user_id=r["user_id"],
            state={**shared[r["user_id"]], **r["state"]},
            last_update_time=r["last_update_time"],
        )
        for r in found
    ]


def _shared_states(app_name: str, user_ids: list[str]) -> dict[str, dict[str, Any]]:
    """user id → the app's ``app:`` keys overlaid with that user's ``user:`` keys."""
    app = AppState.objects.filter(app_name=app_name).values_list("state", flat=True).first()
    users = dict(
        UserState.objects.filter(app_name=app_name, user_id__in=user_ids).values_list(
            "user_id", "state"
        )
    )
    return {uid: {**(app or {}), **users.get(uid, {})} for uid in user_ids}


EVENTS_PAGE_DEFAULT = 50
EVENTS_PAGE_MAX = 200


@dataclass(frozen=True)
class EventsPage:
    """Stored events as change-item data, oldest first (each with its ``position`` in the
    session); ``before`` is the position to ask older ones with, ``None`` when none is
    older; ``after``, for a page asked ``after`` a position, the one to ask newer ones with
    (``None``: this page reaches the latest; always ``None`` for a page asked ``before``)."""

    events: list[dict[str, Any]]
    before: int | None
    after: int | None = None


def session_events_page(
    *,
    session_id: str,
    before: int | None = None,
    after: int | None = None,
    limit: int = EVENTS_PAGE_DEFAULT,
) -> EventsPage:
    """The session's latest ``limit`` events (1..``EVENTS_PAGE_MAX``) with a position below
    ``before`` (``None``: the latest of all), as the live protocol sends them; or, with
    ``after``, its first ``limit`` events with a position above it (a reader who read back
    and comes down again). Not both."""
    if not 1 <= limit <= EVENTS_PAGE_MAX:
        raise ValueError(f"limit must be 1..{EVENTS_PAGE_MAX}")
    if before is not None and after is not None:
        raise ValueError("ask for the events before a position or after one, not both")
    rows = SessionEvent.objects.filter(session_id=session_id)
    if after is not None:
        found = list(rows.filter(seq__gt=after).order_by("seq")[: limit + 1])
        more = len(found) > limit
        found = found[:limit]
        older = rows.filter(seq__lt=found[0].seq).exists() if found else after > 0
        return EventsPage(
            events=[event_item(row) for row in found],
            before=found[0].seq if found and older else None,
            after=found[-1].seq if more else None,
        )
    if before is not None:
        rows = rows.filter(seq__lt=before)
    found = list(rows.order_by("-seq")[: limit + 1])
    more = len(found) > limit
    found = found[:limit][::-1]
    events = [event_item(row) for row in found]
    return EventsPage(events=events, before=found[0].seq if more and found else None)


FORKS_SHOWN = 50


@dataclass(frozen=True)
class ForkLinks:
    """A session's place among forks, as one user may see it: the session it was forked
    from (``None`` when it is not a fork, the parent is gone or not theirs to see) and its
    own forks they may see, newest first (at most ``FORKS_SHOWN``; ``more`` says there are
    others)."""

    parent: AgentSession | None
    forks: list[AgentSession]
    more: bool


def session_fork_links(*, user: Any, session: AgentSession) -> ForkLinks:
    visible = session_list_for_user(user=user)
    parent = visible.filter(pk=session.parent_id).first() if session.parent_id else None
    found = list(
        visible.filter(parent_id=session.pk).order_by("-created_at", "-id")[: FORKS_SHOWN + 1]
    )
    return ForkLinks(parent=parent, forks=found[:FORKS_SHOWN], more=len(found) > FORKS_SHOWN)


# ── reads for the pages (dashboard/) ──────────────────────────────────────────────────────
def session_find(*, session_id: str) -> AgentSession | None:
    """The session of that id with its owner, or ``None``. No permission check: the caller
    has made it (a page that has the user's session already, or the shell)."""
    return AgentSession.objects.select_related("owner").filter(pk=session_id).first()


def session_is_owned_by(*, session_id: str, user: Any) -> bool:
    """Whether the session of that id exists and is ``user``'s own."""
    return AgentSession.objects.filter(pk=session_id, owner=user).exists()


def session_event_place(*, session_id: str, event_id: str) -> dict[str, Any] | None:
    """Where the event of that id is in the session (``seq``) and who wrote it
    (``author``), or ``None`` when the session has no such event."""
    found = SessionEvent.objects.filter(session_id=session_id, event_id=event_id)
    row = found.values("seq", "author").first()
    return None if row is None else dict(row)


def session_state_deltas(*, session_id: str, up_to_seq: int) -> Iterator[dict[str, Any]]:
    """The data of every event of the session that changed state, up to and including
    ``up_to_seq``, oldest first (read in chunks)."""
    rows = (
        SessionEvent.objects.filter(session_id=session_id, seq__lte=up_to_seq)
        .exclude(state_delta_keys=[])
        .order_by("seq")
        .values_list("data", flat=True)
    )
    yield from rows.iterator()


def session_event_rows(
    *, session_id: str, fields: Sequence[str], limit: int, invocation_id: str | None = None
) -> list[dict[str, Any]]:
    """The session's first ``limit`` events (of one invocation when given), oldest first,
    each as a dict of ``fields``."""
    rows = SessionEvent.objects.filter(session_id=session_id)
    if invocation_id is not None:
        rows = rows.filter(invocation_id=invocation_id)
    return list(rows.order_by("seq").values(*fields)[:limit])


def session_events_batched(
    *, session_id: str, fields: Sequence[str], batch: int, with_state_delta: bool = False
) -> Iterator[list[dict[str, Any]]]:
    """Every event of the session (those that changed state, when ``with_state_delta``),
    oldest first, ``batch`` at a time, each as a dict of ``fields`` (``seq`` among them)."""
    rows = SessionEvent.objects.filter(session_id=session_id)
    if with_state_delta:
        rows = rows.exclude(state_delta_keys=[])
    after = 0
    while True:
        found = list(rows.filter(seq__gt=after).order_by("seq").values(*fields)[:batch])
        if not found:
            return
        after = found[-1]["seq"]
        yield found
        if len(found) < batch:
            return


def operator_edits_after(*, session_id: str, after_seq: int) -> list[tuple[int, dict[str, Any]]]:
    """The session's operator state edits after event ``after_seq``, in order: (their event's
    seq, their state delta)."""
    rows = SessionEvent.objects.filter(
        session_id=session_id, author=OPERATOR_AUTHOR, seq__gt=after_seq
    ).order_by("seq")
    found = []
    for seq, data in rows.values_list("seq", "data")[:100]:
        actions = data.get("actions") if isinstance(data, dict) else None
        delta = actions.get("state_delta") if isinstance(actions, dict) else None
        if isinstance(delta, dict) and delta:
            found.append((seq, delta))
    return found


def session_last_event_seq(*, session_id: str) -> int:
    """The seq of the session's latest event (0 when it has none)."""
    last = SessionEvent.objects.filter(session_id=session_id).order_by("-seq").first()
    return last.seq if last is not None else 0
