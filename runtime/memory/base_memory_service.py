"""The contract every long-term memory store implements."""

from __future__ import annotations

import abc

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field

from runtime.sessions.session import Session


class MemoryEntry(BaseModel):
    """One remembered piece of a past conversation.

    ``timestamp`` is an ISO 8601 string (when the original event happened), ``None`` when
    unknown.
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    content: types.Content
    author: str | None = None
    timestamp: str | None = None


class SearchMemoryResponse(BaseModel):
    """What :meth:`BaseMemoryService.search_memory` returns, best match first."""

    model_config = ConfigDict(extra="forbid")

    memories: list[MemoryEntry] = Field(default_factory=list)


class BaseMemoryService(abc.ABC):
    """Stores finished sessions and finds what was said in them.

    Methods are async, as in ADK. Memories are scoped to an app and a user: a search never
    returns another user's or another app's memories.
    """

    @abc.abstractmethod
    async def add_session_to_memory(self, session: Session) -> None:
        """Remember ``session``'s events. Adding the same session (same app, user and id)
        again replaces what was remembered of it."""

    @abc.abstractmethod
    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        """The user's memories relevant to ``query``, most relevant first."""
