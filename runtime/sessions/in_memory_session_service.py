"""A session store in process memory: for tests, scripts and the examples."""

from __future__ import annotations

import copy
import threading
import time
import uuid
from typing import Any

from runtime.events.event import Event
from runtime.sessions.base_session_service import (
    BaseSessionService,
    GetSessionConfig,
    ListSessionsResponse,
    SessionExistsError,
    SessionNotFoundError,
)
from runtime.sessions.session import Session
from runtime.sessions.state import scope_of


class InMemorySessionService(BaseSessionService):
    """Keeps everything in dicts guarded by one lock; nothing survives the process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (app, user, session id) -> session with only its own keys in state
        self._sessions: dict[tuple[str, str, str], Session] = {}
        self._user_state: dict[tuple[str, str], dict[str, Any]] = {}
        self._app_state: dict[str, dict[str, Any]] = {}

    def _store_delta(self, app_name: str, user_id: str, own: dict[str, Any], delta: dict) -> None:
        for key, value in delta.items():
            scope = scope_of(key)
            if scope == "app":
                self._app_state.setdefault(app_name, {})[key] = value
            elif scope == "user":
                self._user_state.setdefault((app_name, user_id), {})[key] = value
            elif scope == "session":
                own[key] = value

    def _snapshot(self, stored: Session, config: GetSessionConfig | None = None) -> Session:
        state = {
            **self._app_state.get(stored.app_name, {}),
            **self._user_state.get((stored.app_name, stored.user_id), {}),
            **stored.state,
        }
        events = stored.events
        if config is not None:
            if config.after_timestamp is not None:
                events = [e for e in events if e.timestamp > config.after_timestamp]
            if config.num_recent_events is not None:
                events = events[-config.num_recent_events :] if config.num_recent_events else []
        return Session(
            id=stored.id,
            app_name=stored.app_name,
            user_id=stored.user_id,
            state=copy.deepcopy(state),
            events=list(events),
            last_update_time=stored.last_update_time,
        )

    def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        session_id = (session_id or "").strip() or uuid.uuid4().hex
        with self._lock:
            key = (app_name, user_id, session_id)
            if key in self._sessions:
                raise SessionExistsError(f"session {session_id!r} already exists")
            stored = Session(id=session_id, app_name=app_name, user_id=user_id)
            self._store_delta(app_name, user_id, stored.state, copy.deepcopy(state or {}))
            self._sessions[key] = stored
            return self._snapshot(stored)

    def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        with self._lock:
            stored = self._sessions.get((app_name, user_id, session_id))
            return None if stored is None else self._snapshot(stored, config)

    def list_sessions(self, *, app_name: str, user_id: str | None = None) -> ListSessionsResponse:
        with self._lock:
            found = [
                self._snapshot(s, GetSessionConfig(num_recent_events=0))
                for (app, user, _), s in self._sessions.items()
                if app == app_name and (user_id is None or user == user_id)
            ]
        return ListSessionsResponse(sessions=found)

    def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        with self._lock:
            self._sessions.pop((app_name, user_id, session_id), None)

    def append_event(self, session: Session, event: Event) -> Event:
        if event.partial:
            return event
        event = self.apply_to_live_session(session, event)
        with self._lock:
            stored = self._sessions.get((session.app_name, session.user_id, session.id))
            if stored is None:
                raise SessionNotFoundError(f"session {session.id!r} does not exist")
            self._store_delta(
                session.app_name,
                session.user_id,
                stored.state,
                copy.deepcopy(event.actions.state_delta),
            )
            stored.events.append(event)
            stored.last_update_time = max(event.timestamp, time.time())
        return event
