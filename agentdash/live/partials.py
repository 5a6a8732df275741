"""Streamed model text on its way to a session's clients: queued between flushes, sent ahead
of each flush's changes, chunks that met in one flush joined into one message."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

from agentdash.live.groups import session_group
from agentdash.live.pages import MAX_SENT_BYTES

logger = logging.getLogger(__name__)

Partial = dict[str, Any]
"""A ``session.partial`` channel-layer message (``protocol.partial_message`` plus its type)."""

_SAME_RUN = ("run_id", "invocation_id", "author")
PARTIAL_CHARS = (MAX_SENT_BYTES - 4096) // 12
"""Most characters of text one ``partial`` message carries: sent as JSON with ``\\uXXXX``
escapes (twelve bytes for a character beyond the BMP), it stays within ``MAX_SENT_BYTES``
whatever the text. daphne refuses to send a message over its limit: a model's chunk of a
megabyte was dropped, logged as an error. Longer text goes out in several messages; clients
append them, so the page shows the same."""


class PartialQueue:
    """Partial messages waiting for the next flush, per session, in arrival order; safe to
    fill from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[str, list[Partial]] = {}

    def put(self, session_id: str, message: Partial) -> bool:
        """Queue ``message``; True when it is the first since the last :meth:`take`."""
        with self._lock:
            first = not self._waiting
            self._waiting.setdefault(session_id, []).append(message)
        return first

    def take(self) -> dict[str, list[Partial]]:
        """Everything queued, by session; the queue is empty afterwards."""
        with self._lock:
            taken, self._waiting = self._waiting, {}
        return taken

    def clear(self) -> None:
        self.take()

    def __bool__(self) -> bool:
        return bool(self._waiting)


def partials_joined(chunks: list[Partial]) -> list[Partial]:
    """``chunks`` with each run of chunks of one author in one invocation joined into one
    message, cut where it would carry over :data:`PARTIAL_CHARS` (clients append chunks, so
    the text shows the same)."""
    joined: list[Partial] = []
    for chunk in chunks:
        last = joined[-1] if joined else None
        if last is not None and all(last[k] == chunk[k] for k in _SAME_RUN):
            last["text"] += chunk["text"]
        else:
            joined.append(dict(chunk))
    return [
        {**message, "text": message["text"][at : at + PARTIAL_CHARS]}
        for message in joined
        for at in range(0, max(len(message["text"]), 1), PARTIAL_CHARS)
    ]


async def partials_send(layer: Any, partials: dict[str, list[Partial]]) -> None:
    """Send each session's partials, joined, in order, all sessions at once; a failed send is
    logged (the stored event replaces the text anyway)."""

    async def send(session_id: str, chunks: list[Partial]) -> None:
        for message in partials_joined(chunks):  # one session's messages one after another
            await layer.group_send(session_group(session_id), message)

    sends = [send(session_id, chunks) for session_id, chunks in partials.items()]
    for outcome in await asyncio.gather(*sends, return_exceptions=True):
        if isinstance(outcome, BaseException):
            logger.error("live pipeline: publishing a partial failed", exc_info=outcome)
