"""Session state with ADK's scope prefixes and change tracking."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


class State:
    """A view of a session's state that records every write as a delta.

    Reads see pending writes first, then the session's value. A write goes to both, so it is
    visible at once to the rest of the invocation, and it lands in the owning event's
    ``actions.state_delta``, which the session service persists when the event is appended.

    Keys are scoped by prefix: ``app:`` is shared by every user and session of the app,
    ``user:`` by one user's sessions of the app, ``temp:`` lives for the current invocation
    only and is never stored; anything else belongs to the session.
    """

    APP_PREFIX = "app:"
    USER_PREFIX = "user:"
    TEMP_PREFIX = "temp:"

    __slots__ = ("_delta", "_value")

    def __init__(self, value: dict[str, Any], delta: dict[str, Any]) -> None:
        self._value = value
        self._delta = delta

    def __getitem__(self, key: str) -> Any:
        if key in self._delta:
            return self._delta[key]
        return self._value[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._value[key] = value
        self._delta[key] = value

    def __contains__(self, key: object) -> bool:
        return key in self._delta or key in self._value

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())

    def __repr__(self) -> str:
        return f"State({self.to_dict()!r})"

    def get(self, key: str, default: Any = None) -> Any:
        if key in self:
            return self[key]
        return default

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def update(self, delta: Mapping[str, Any]) -> None:
        for key, value in delta.items():
            self[key] = value

    def has_delta(self) -> bool:
        return bool(self._delta)

    def to_dict(self) -> dict[str, Any]:
        """A merged, plain-dict snapshot (pending writes over stored values)."""
        return {**self._value, **self._delta}

    def items(self) -> Any:
        return self.to_dict().items()

    def keys(self) -> Any:
        return self.to_dict().keys()


def scope_of(key: str) -> str:
    """``"app"``, ``"user"``, ``"temp"`` or ``"session"`` for a state key."""
    if key.startswith(State.APP_PREFIX):
        return "app"
    if key.startswith(State.USER_PREFIX):
        return "user"
    if key.startswith(State.TEMP_PREFIX):
        return "temp"
    return "session"


def without_temp(delta: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in delta.items() if not k.startswith(State.TEMP_PREFIX)}
