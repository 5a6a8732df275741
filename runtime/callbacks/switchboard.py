"""Which callbacks are switched on: asked at every call point, so flips apply mid-run."""

from __future__ import annotations

import threading
from typing import Protocol, runtime_checkable


@runtime_checkable
class Switchboard(Protocol):
    """Says whether a named callback may run for an agent in a session.

    ``is_enabled`` is called before every callback invocation, on the event loop: it must
    answer from memory, never block on I/O. A host application keeps its answers fresh (the
    Django app pushes toggles to every process).
    """

    def is_enabled(self, *, agent_name: str, callback_name: str, session_id: str) -> bool: ...


class AllEnabled:
    """The default: every callback runs."""

    def is_enabled(self, *, agent_name: str, callback_name: str, session_id: str) -> bool:
        return True


class InMemorySwitchboard:
    """Toggles held in process memory: globally, per agent, or per agent and session.

    The most specific setting wins: (agent, session) over (agent, any session) over
    (any agent, any session). ``agent_name=None`` / ``session_id=None`` mean "any".
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._settings: dict[tuple[str, str | None, str | None], bool] = {}

    def set(
        self,
        callback_name: str,
        enabled: bool,
        *,
        agent_name: str | None = None,
        session_id: str | None = None,
    ) -> None:
        with self._lock:
            self._settings[(callback_name, agent_name, session_id)] = enabled

    def disable(self, callback_name: str, **scope: str | None) -> None:
        self.set(callback_name, False, **scope)

    def enable(self, callback_name: str, **scope: str | None) -> None:
        self.set(callback_name, True, **scope)

    def clear(self) -> None:
        with self._lock:
            self._settings.clear()

    def is_enabled(self, *, agent_name: str, callback_name: str, session_id: str) -> bool:
        settings = self._settings
        if not settings:
            return True
        for key in (
            (callback_name, agent_name, session_id),
            (callback_name, agent_name, None),
            (callback_name, None, session_id),
            (callback_name, None, None),
        ):
            found = settings.get(key)
            if found is not None:
                return found
        return True
