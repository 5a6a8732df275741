"""The runtime's session store, backed by the Django database."""

from __future__ import annotations

from typing import Any

from agentdash.agent_sessions import selectors, services
from agentdash.agent_sessions._state_store import Appended, event_append
from agentdash.agent_sessions.event_data import event_serialize
from agentdash.core.threads import in_worker_thread
from runtime.events.event import Event
from runtime.sessions.base_session_service import (
    BaseSessionService,
    GetSessionConfig,
    ListSessionsResponse,
    SessionNotFoundError,
)
from runtime.sessions.session import Session
from runtime.sessions.state import State


class DjangoSessionService(BaseSessionService):
    """Sessions, events and state in the database (``agent_sessions`` models).

    Events are stored whole, in order (``seq``), with the session version their delta
    produced. ``append_event`` stores the event and applies its delta in one transaction,
    guarded by a compare-and-swap on the session's ``version`` (and on the ``AppState`` /
    ``UserState`` rows for ``app:``/``user:`` keys), retried on a fresh read when another
    writer — another agent, another process, an operator — committed first, so no update is
    lost. Afterwards the live session's ``state`` is refreshed in place with the stored merged
    state, so a change made meanwhile (an operator's edit) is visible to the agent's next step.

    The sync methods must be called outside an event loop (Django forbids blocking ORM calls
    in async code); the ``a``-prefixed twins run them in a worker thread.
    """

    def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
        owner: Any = None,
        title: str = "",
    ) -> Session:
        """Create a session (``owner``: the dashboard user it belongs to, if any)."""
        row = services.session_create(
            app_name=app_name,
            user_id=user_id,
            state=state,
            session_id=session_id,
            owner=owner,
            title=title,
        )
        created = selectors.session_snapshot(session_id=row.id, app_name=app_name, user_id=user_id)
        if created is None:  # deleted the same instant by someone else
            raise SessionNotFoundError(f"session {row.id!r} vanished right after creation")
        return created

    def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        return selectors.session_snapshot(
            session_id=session_id, app_name=app_name, user_id=user_id, config=config
        )

    def list_sessions(self, *, app_name: str, user_id: str | None = None) -> ListSessionsResponse:
        return ListSessionsResponse(
            sessions=selectors.session_snapshots(app_name=app_name, user_id=user_id)
        )

    def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        services.session_delete(session_id=session_id, app_name=app_name, user_id=user_id)

    def append_event(self, session: Session, event: Event) -> Event:
        if event.partial:
            return event
        appended = self._store(
            session.app_name, session.user_id, session.id, event_serialize(event)
        )
        return self._apply_live(session, event, appended)

    async def acreate_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
        owner: Any = None,
        title: str = "",
    ) -> Session:
        create = in_worker_thread(self.create_session)
        return await create(
            app_name=app_name,
            user_id=user_id,
            state=state,
            session_id=session_id,
            owner=owner,
            title=title,
        )

    async def aget_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        get = in_worker_thread(self.get_session)
        return await get(app_name=app_name, user_id=user_id, session_id=session_id, config=config)

    async def alist_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        found = await in_worker_thread(self.list_sessions)(app_name=app_name, user_id=user_id)
        return found

    async def adelete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        delete = in_worker_thread(self.delete_session)
        await delete(app_name=app_name, user_id=user_id, session_id=session_id)

    async def aappend_event(self, session: Session, event: Event) -> Event:
        if event.partial:
            return event
        # Serialize here and touch the live session only on this (the caller's) thread: the
        # worker thread sees plain data, never an object the event loop may be changing.
        data = event_serialize(event)
        store = in_worker_thread(self._store)
        appended = await store(session.app_name, session.user_id, session.id, data)
        return self._apply_live(session, event, appended)

    @staticmethod
    def _store(app_name: str, user_id: str, session_id: str, data: dict[str, Any]) -> Appended:
        try:
            return event_append(
                session_id=session_id, event_data=data, app_name=app_name, user_id=user_id
            )
        except SessionNotFoundError:
            raise SessionNotFoundError(
                f"session {session_id!r} of user {user_id!r} in app {app_name!r} does not exist"
            ) from None

    def _apply_live(self, session: Session, event: Event, appended: Appended) -> Event:
        stored = self.apply_to_live_session(session, event)
        # Key by key and without clearing: temp: keys stay, and so do keys a step has written
        # but not yet appended (stored state never loses keys, so nothing else is stale).
        session.state.update(
            {k: v for k, v in appended.state.items() if not k.startswith(State.TEMP_PREFIX)}
        )
        session.last_update_time = appended.last_update_time
        return stored
