"""The runtime's long-term memory, backed by the Django database (``MemoryRecord``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.db import transaction
from django.db.models import Q
from google.genai import types

from agentdash.agent_sessions.models import MemoryRecord
from agentdash.core.hygiene import storable, text_storable
from agentdash.core.threads import in_worker_thread
from runtime.events.event import Event
from runtime.memory.base_memory_service import (
    BaseMemoryService,
    MemoryEntry,
    SearchMemoryResponse,
)
from runtime.memory.in_memory_memory_service import words_of
from runtime.sessions.session import Session


def _text_of(event: Event) -> str:
    if not event.content or not event.content.parts:
        return ""
    return " ".join(p.text for p in event.content.parts if p.text)


class DjangoMemoryService(BaseMemoryService):
    """Keyword search over the text of remembered events, as ``InMemoryMemoryService`` does.

    Only events with text are kept, one row each, with their distinct lower-cased words
    stored space-padded so the database finds whole-word candidates; ranking happens here:
    most distinct query words first, then oldest first (then in the order remembered).
    """

    async def add_session_to_memory(self, session: Session) -> None:
        rows = [
            {
                "author": text_storable(event.author)[0],
                "timestamp": event.timestamp,
                "text": text,
                "words": " " + " ".join(sorted(words_of(text))) + " ",
                "content": storable(event.content.model_dump(mode="json", exclude_none=True))[0],
            }
            for event in session.events
            # Stored, never refused: NUL and lone surrogates become U+FFFD (core.hygiene).
            if event.content is not None and (text := text_storable(_text_of(event))[0]).strip()
        ]
        await in_worker_thread(_replace)(session.app_name, session.user_id, session.id, rows)

    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        query_words = words_of(query)
        if not query_words:
            return SearchMemoryResponse()
        found = await in_worker_thread(_candidates)(app_name, user_id, sorted(query_words))
        scored = []
        for words, timestamp, author, content in found:
            hits = len(query_words.intersection(words.split()))
            if hits:
                scored.append((hits, timestamp, author, content))
        scored.sort(key=lambda s: (-s[0], s[1]))  # stable: ties keep the remembered order
        return SearchMemoryResponse(
            memories=[
                MemoryEntry(
                    content=types.Content.model_validate(content),
                    author=author,
                    timestamp=datetime.fromtimestamp(timestamp, tz=UTC).isoformat(),
                )
                for _, timestamp, author, content in scored
            ]
        )


def _replace(app_name: str, user_id: str, session_id: str, rows: list[dict[str, Any]]) -> None:
    where = {"app_name": app_name, "user_id": user_id, "session_id": session_id}
    with transaction.atomic():
        MemoryRecord.objects.filter(**where).delete()
        MemoryRecord.objects.bulk_create([MemoryRecord(**where, **row) for row in rows])


def _candidates(app_name: str, user_id: str, words: list[str]) -> list[tuple[Any, ...]]:
    any_word = Q()
    for word in words:
        any_word |= Q(words__contains=f" {word} ")
    return list(
        MemoryRecord.objects.filter(any_word, app_name=app_name, user_id=user_id)
        .order_by("id")
        .values_list("words", "timestamp", "author", "content")
    )
