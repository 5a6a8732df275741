"""Telling this process that a session's change log grew, once the change is committed.

Whoever publishes changes (the live pipeline, registered when Django starts) registers an
announcer; every recorded change calls :func:`announce_on_commit` in its transaction. A
rolled-back change announces nothing. An announcer that fails is logged and the others still
hear: the database is the truth, an announcement only makes the change go out sooner.

A writer that knows what it recorded (the span store's batch writes, an event appended, a
run's status change) may announce the change items with it, as a function that makes them: a
publisher in this process then sends them without reading back what was just written. A
maker is called at most once, on the publisher's thread, and only if it uses it; items the
writer made already (:class:`ItemsMade`: an event's, a run's end) ask nothing more.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Protocol

from django.db import transaction

logger = logging.getLogger(__name__)

ItemsMaker = Callable[[int], list[dict[str, Any]]]
"""Makes the first ``limit`` (its argument) change items (``{"seq", "kind", "data"}``) a
write recorded for one session, in seq order, with no gap: from the announced ``seq`` on.
A publisher asks for what it can send at once, not for the whole of a big write."""


class ItemsMade:
    """An :data:`ItemsMaker` whose items are made already, from what the writer has in hand:
    it asks nothing of the database, so a publisher may take them on any thread — on an
    event loop too, without a hop to a thread (``live.flush_writer.FlushWriter.told``)."""

    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items

    def __call__(self, limit: int) -> list[dict[str, Any]]:
        return self.items[: max(limit, 0)]


class Announcer(Protocol):
    def __call__(
        self,
        session_id: str,
        *,
        seq: int | None = None,
        items: ItemsMaker | None = None,
        prompt: bool = False,
    ) -> None:
        """The session has new changes, the first of them ``seq`` (``items``: makes them,
        when the writer knows them all; ``prompt``: someone waits to see them, so they go
        out without waiting for more to gather). Called from any thread (the one that
        committed); must not block."""


_lock = threading.Lock()
_announcers: tuple[Announcer, ...] = ()


def announcer_register(announcer: Announcer) -> None:
    """Have ``announcer`` told of every committed change of this process (idempotent)."""
    global _announcers
    with _lock:
        if announcer not in _announcers:
            _announcers = (*_announcers, announcer)


def announcer_unregister(announcer: Announcer) -> None:
    """Stop telling ``announcer`` (tests)."""
    global _announcers
    with _lock:
        _announcers = tuple(a for a in _announcers if a != announcer)


def announce_on_commit(
    session_id: str, seq: int, *, items: ItemsMaker | None = None, prompt: bool = False
) -> None:
    """Announce change ``seq`` of the session when the current transaction commits (at once
    outside a transaction); ``items``, when given, makes every change item the write
    recorded for the session (see :data:`ItemsMaker`); ``prompt``: see :class:`Announcer`."""
    transaction.on_commit(lambda: _announce(session_id, seq, items, prompt))


def _announce(session_id: str, seq: int, items: ItemsMaker | None, prompt: bool) -> None:
    for announcer in _announcers:
        try:
            announcer(session_id, seq=seq, items=items, prompt=prompt)
        except Exception:
            logger.exception("announcing change %s of session %s failed", seq, session_id)
