"""A read-only view of the invocation, for instruction providers."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from google.genai import types

if TYPE_CHECKING:
    from runtime.contexts.invocation_context import InvocationContext
    from runtime.sessions.session import Session


class ReadonlyContext:
    __slots__ = ("_invocation_context",)

    def __init__(self, invocation_context: InvocationContext) -> None:
        self._invocation_context = invocation_context

    @property
    def invocation_id(self) -> str:
        return self._invocation_context.invocation_id

    @property
    def agent_name(self) -> str:
        return self._invocation_context.agent.name

    @property
    def user_id(self) -> str:
        return self._invocation_context.user_id

    @property
    def user_content(self) -> types.Content | None:
        return self._invocation_context.user_content

    @property
    def session(self) -> Session:
        return self._invocation_context.session

    @property
    def state(self) -> Mapping[str, Any]:
        """The session state; read-only here."""
        return MappingProxyType(self._invocation_context.session.state)
