"""The runtime's ``Switchboard``, answered from a snapshot of the database's callback switches.

``is_enabled`` runs on the event loop before every callback call, so it only reads an
in-memory mapping. The snapshot is replaced whole (never mutated after it is published), so
readers on any thread see either the old or the new one. It is kept fresh by ``refresh`` /
``arefresh`` (a full reload) and ``apply`` (one pushed change, e.g. from the channel layer).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from types import MappingProxyType
from typing import Any

from asgiref.sync import sync_to_async

from agentdash.controls.models import CallbackSetting
from agentdash.controls.selectors import SettingKey, callback_settings_snapshot

__all__ = ["CallbackSettingChange", "DatabaseSwitchboard"]


@dataclass(frozen=True)
class CallbackSettingChange:
    """One switch set (``enabled`` True/False) or cleared (``enabled`` None) for an agent,
    for one session or (``session_id`` None) every session. ``as_message`` / ``from_message``
    give the JSON-able form sent over the channel layer."""

    agent_name: str
    callback_name: str
    session_id: str | None
    enabled: bool | None

    @classmethod
    def for_setting(
        cls, setting: CallbackSetting, *, cleared: bool = False
    ) -> CallbackSettingChange:
        return cls(
            agent_name=setting.agent_name,
            callback_name=setting.callback_name,
            session_id=setting.session_id,
            enabled=None if cleared else setting.enabled,
        )

    def as_message(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_message(cls, message: Mapping[str, Any]) -> CallbackSettingChange:
        """Raises ``ValueError`` for a malformed message (missing keys or wrong types)."""
        try:
            agent, callback = message["agent_name"], message["callback_name"]
            session, enabled = message.get("session_id"), message.get("enabled")
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a callback setting change: {message!r}") from exc
        if (
            not isinstance(agent, str)
            or not isinstance(callback, str)
            or not (session is None or isinstance(session, str))
            or not (enabled is None or isinstance(enabled, bool))
        ):
            raise ValueError(f"not a callback setting change: {message!r}")
        return cls(agent_name=agent, callback_name=callback, session_id=session, enabled=enabled)

    @property
    def key(self) -> SettingKey:
        return (self.callback_name, self.agent_name, self.session_id)


def _put(settings: dict[SettingKey, bool], change: CallbackSettingChange) -> None:
    if change.enabled is None:
        settings.pop(change.key, None)
    else:
        settings[change.key] = change.enabled


class DatabaseSwitchboard:
    """Callback switches as stored by ``callback_setting_set``: the most specific wins,
    (agent, session) over (agent, every session); with neither, the callback runs.

    Starts empty (everything on) until the first ``refresh``. Safe to share between threads
    and event loops. A change ``apply``-ed while a reload is under way is replayed on top of
    the reloaded snapshot, so a reload that read the database just before that change cannot
    undo it.
    """

    def __init__(self, settings: Mapping[SettingKey, bool] | None = None) -> None:
        self._lock = threading.Lock()
        self._snapshot: Mapping[SettingKey, bool] = MappingProxyType(dict(settings or {}))
        self._applied = 0  # changes applied so far; a reload replays those after its start
        self._loads = 0  # reloads under way
        self._recent: list[tuple[int, CallbackSettingChange]] = []  # kept while _loads > 0

    def is_enabled(self, *, agent_name: str, callback_name: str, session_id: str) -> bool:
        snapshot = self._snapshot  # one read: the whole answer comes from one snapshot
        if not snapshot:
            return True
        found = snapshot.get((callback_name, agent_name, session_id))
        if found is None:
            found = snapshot.get((callback_name, agent_name, None))
        return True if found is None else found

    def snapshot(self) -> Mapping[SettingKey, bool]:
        """The current settings (read-only)."""
        return self._snapshot

    def refresh(self) -> None:
        """Reload every switch from the database (blocking: not on the event loop)."""
        since = self._load_begin()
        try:
            loaded = callback_settings_snapshot()
        except BaseException:
            self._load_end(None, since)
            raise
        self._load_end(loaded, since)

    async def arefresh(self) -> None:
        """``refresh`` for async code: the query runs in a worker thread."""
        since = self._load_begin()
        try:
            loaded = await sync_to_async(callback_settings_snapshot)()
        except BaseException:
            self._load_end(None, since)
            raise
        self._load_end(loaded, since)

    def apply(self, change: CallbackSettingChange | Mapping[str, Any]) -> None:
        """Apply one change without a reload; a mapping is read with ``from_message``."""
        if not isinstance(change, CallbackSettingChange):
            change = CallbackSettingChange.from_message(change)
        with self._lock:
            settings = dict(self._snapshot)
            _put(settings, change)
            self._snapshot = MappingProxyType(settings)
            if self._loads:
                self._recent.append((self._applied, change))
            self._applied += 1

    def _load_begin(self) -> int:
        with self._lock:
            self._loads += 1
            return self._applied

    def _load_end(self, loaded: dict[SettingKey, bool] | None, since: int) -> None:
        with self._lock:
            if loaded is not None:
                for number, change in self._recent:
                    if number >= since:
                        _put(loaded, change)
                self._snapshot = MappingProxyType(loaded)
            self._loads -= 1
            if not self._loads:
                self._recent.clear()
