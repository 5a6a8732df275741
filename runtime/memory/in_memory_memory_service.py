"""A memory store in process memory that matches words: for tests, scripts and the examples."""

from __future__ import annotations

import re
import threading
from datetime import UTC, datetime

from runtime.events.event import Event
from runtime.memory.base_memory_service import (
    BaseMemoryService,
    MemoryEntry,
    SearchMemoryResponse,
)
from runtime.sessions.session import Session

# A word is a run of letters and digits (any script); "_" and punctuation separate words.
_WORD = re.compile(r"[^\W_]+")


def words_of(text: str) -> set[str]:
    """The distinct lowercased words of ``text``."""
    return {w.lower() for w in _WORD.findall(text)}


def _text_of(event: Event) -> str:
    if not event.content or not event.content.parts:
        return ""
    return " ".join(p.text for p in event.content.parts if p.text)


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=UTC).isoformat()


class InMemoryMemoryService(BaseMemoryService):
    """Keyword search over the text of remembered events; no embeddings, no ranking model.

    Only events with text are kept. An event matches a query when it shares at least one word
    with it (case-insensitive; words are runs of letters and digits). Results are ordered by
    the number of distinct query words the event contains, most first, then by the event's
    timestamp, oldest first. Every match is returned. Nothing survives the process.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (app, user) -> session id -> remembered events
        self._events: dict[tuple[str, str], dict[str, list[Event]]] = {}

    async def add_session_to_memory(self, session: Session) -> None:
        kept = [e for e in session.events if _text_of(e).strip()]
        with self._lock:
            self._events.setdefault((session.app_name, session.user_id), {})[session.id] = kept

    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        query_words = words_of(query)
        if not query_words:
            return SearchMemoryResponse()
        with self._lock:
            events = [
                e for kept in self._events.get((app_name, user_id), {}).values() for e in kept
            ]
        scored: list[tuple[int, float, Event]] = []
        for event in events:
            hits = len(query_words & words_of(_text_of(event)))
            if hits:
                scored.append((hits, event.timestamp, event))
        scored.sort(key=lambda s: (-s[0], s[1]))
        return SearchMemoryResponse(
            memories=[
                MemoryEntry(
                    content=event.content.model_copy(deep=True),
                    author=event.author,
                    timestamp=_iso(event.timestamp),
                )
                for _, _, event in scored
                if event.content is not None
            ]
        )
