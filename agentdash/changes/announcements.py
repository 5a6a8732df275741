"""Telling this process that a session's change log grew, once the change is committed.

Whoever publishes changes (the live pipeline, registered when Django starts) registers an
announcer; every recorded change calls :func:`announce_on_commit` in its transaction. A
rolled-back change announces nothing. An announcer that fails is logged and the others still
hear: the database is the truth, an announcement only makes the change go out sooner.
"""

from __future__ import annotations

import logging
import threading
from typing import Protocol

from django.db import transaction

logger = logging.getLogger(__name__)


class Announcer(Protocol):
    def __call__(self, session_id: str, *, seq: int | None = None) -> None:
        """The session has new changes, the first of them ``seq``. Called from any thread
        (the one that committed); must not block."""


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


def announce_on_commit(session_id: str, seq: int) -> None:
    """Announce change ``seq`` of the session when the current transaction commits (at once
    outside a transaction)."""
    transaction.on_commit(lambda: _announce(session_id, seq))


def _announce(session_id: str, seq: int) -> None:
    for announcer in _announcers:
        try:
            announcer(session_id, seq=seq)
        except Exception:
            logger.exception("announcing change %s of session %s failed", seq, session_id)
