"""What every tool is."""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any

from google.genai import types

from runtime.tools.identity import AGENT, Identity, checked_identity

if TYPE_CHECKING:
    from runtime.tools.tool_context import ToolContext


class BaseTool(abc.ABC):
    """A capability the model can call by name.

    ``run_async`` gets the model's arguments and a :class:`ToolContext` and returns the result
    dict the model sees. ``is_long_running`` tools start work that finishes later: the
    invocation pauses after calling one. ``identity`` is whom the tool acts as: ``"agent"``
    (the default, the runner's service identity) or ``"user"`` (the session's owner); its
    ``ToolContext.principal`` and its span say which (``ValueError`` for anything else).
    """

    tool_type: str = "function"
    identity: Identity = AGENT

    def __init__(
        self,
        *,
        name: str,
        description: str = "",
        is_long_running: bool = False,
        identity: Identity = AGENT,
    ) -> None:
        if not name or not name.replace("_", "a").replace("-", "a").isalnum():
            raise ValueError(
                f"tool name {name!r} must be letters, digits, '_' or '-' (the model calls it)"
            )
        self.name = name
        self.description = description
        self.is_long_running = is_long_running
        self.identity = checked_identity(identity)

    def get_declaration(self) -> types.FunctionDeclaration | None:
        """How the model sees this tool; ``None`` keeps it out of the request."""
        return None

    @abc.abstractmethod
    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        """Run with the model's ``args``."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
