"""The contract every session store implements."""

from __future__ import annotations

import abc
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from runtime.events.event import Event
from runtime.sessions.session import Session
from runtime.sessions.state import State, without_temp


class GetSessionConfig(BaseModel):
    """Limits what ``get_session`` loads: the newest ``num_recent_events`` events and/or only
    events after ``after_timestamp``."""

    num_recent_events: int | None = None
    after_timestamp: float | None = None


class ListSessionsResponse(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    sessions: list[Session] = Field(default_factory=list)


class SessionNotFoundError(LookupError):
    """The named session does not exist (or belongs to another app or user)."""


class SessionExistsError(ValueError):
    """``create_session`` was given an id that is already taken."""


class BaseSessionService(abc.ABC):
    """Stores sessions, their events and their state.

    Methods are synchronous, as ADK's examples call them; each has an ``a``-prefixed async twin
    (``acreate_session`` …). The twins call the sync method directly by default, which suits
    stores that never block; a store that does I/O overrides them.

    State changes only through :meth:`append_event`: it applies the event's
    ``actions.state_delta`` to the live ``session`` passed in and persists it, with ``app:`` and
    ``user:`` keys going to their shared scopes and ``temp:`` keys never stored.
    """

    @abc.abstractmethod
    def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        """Create and return a session. Raises :class:`SessionExistsError` for a taken id."""

    @abc.abstractmethod
    def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        """A snapshot of the session with merged state, or ``None`` when there is none."""

    @abc.abstractmethod
    def list_sessions(self, *, app_name: str, user_id: str | None = None) -> ListSessionsResponse:
        """The app's sessions (one user's when ``user_id`` is given), without their events."""

    @abc.abstractmethod
    def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete the session and its events; a missing session is not an error."""

    @abc.abstractmethod
    def append_event(self, session: Session, event: Event) -> Event:
        """Persist ``event`` and apply its state delta; return the stored event.

        Partial events are returned untouched and not stored. ``temp:`` keys are applied to the
        live ``session`` (the rest of the invocation sees them) but removed from the stored
        event's delta.
        """

    async def acreate_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        return self.create_session(
            app_name=app_name, user_id=user_id, state=state, session_id=session_id
        )

    async def aget_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        return self.get_session(
            app_name=app_name, user_id=user_id, session_id=session_id, config=config
        )

    async def alist_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        return self.list_sessions(app_name=app_name, user_id=user_id)

    async def adelete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        self.delete_session(app_name=app_name, user_id=user_id, session_id=session_id)

    async def aappend_event(self, session: Session, event: Event) -> Event:
        return self.append_event(session, event)

    # Helpers shared by implementations.

    @staticmethod
    def apply_to_live_session(session: Session, event: Event) -> Event:
        """Apply ``event``'s delta to the in-memory ``session`` and return the event as it is
        to be stored (``temp:`` keys removed from its delta)."""
        delta = event.actions.state_delta
        if delta:
            session.state.update(delta)
            if any(k.startswith(State.TEMP_PREFIX) for k in delta):
                actions = event.actions.model_copy(update={"state_delta": without_temp(delta)})
                event = event.model_copy(update={"actions": actions})
        session.events.append(event)
        session.last_update_time = event.timestamp
        return event
