"""What the session store raises beyond the runtime's own errors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentdash.core.problems import ConflictError


@dataclass(frozen=True)
class KeyConflict:
    """One key of an operator edit that someone else changed after the operator looked.

    ``scope`` says which version numbers are meant: ``"session"`` (the session's version,
    changed by one of its events), ``"app"`` or ``"user"`` (that shared scope's version, changed
    from any session). ``changed_at_version`` is the version whose write last changed the key;
    ``current_version`` is the scope's version now, the one to resubmit against.
    """

    key: str
    current_value: Any
    scope: str
    seen_version: int
    changed_at_version: int
    current_version: int

    def describe(self) -> str:
        label = "version" if self.scope == "session" else f"{self.scope} state version"
        return (
            f"key {self.key!r} changed since {label} {self.seen_version}: "
            f"it is now {self.current_value!r} ({label} {self.current_version})"
        )


class StateConflictError(ConflictError):
    """An operator edit was refused: a key it sets changed after the version it was based on.

    Nothing was written. ``conflicts`` maps each conflicting key to its :class:`KeyConflict`
    (current value and versions), so a form can show them and offer to resubmit.
    """

    def __init__(self, *, session_id: str, conflicts: list[KeyConflict]) -> None:
        self.session_id = session_id
        self.conflicts = {c.key: c for c in conflicts}
        super().__init__("; ".join(c.describe() for c in conflicts))

    @property
    def current_version(self) -> int:
        """The session's version now (the newest one any session-scope conflict saw)."""
        versions = [c.current_version for c in self.conflicts.values() if c.scope == "session"]
        return max(versions, default=0)


class ConcurrentUpdateError(RuntimeError):
    """A write lost its compare-and-swap on every attempt (sustained contention on one row).

    Nothing was written; the caller may try again later.
    """
