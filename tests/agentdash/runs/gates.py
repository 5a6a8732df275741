"""A tool that blocks until the test lets it go: runs are caught mid-step with it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from runtime import ToolContext


class Gate:
    """``tool`` (named ``slow_lookup``) waits at the gate: ``entered`` is set when a call
    arrives, the call returns once ``release`` is set. ``before`` runs first, inside the call,
    with the tool context (to write state, say)."""

    def __init__(self, before: Callable[[ToolContext], None] | None = None) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.calls = 0
        self.finished = 0
        self.before = before

    @property
    def tool(self) -> Callable[..., Coroutine[Any, Any, dict[str, Any]]]:
        gate = self

        async def slow_lookup(topic: str, tool_context: ToolContext) -> dict[str, Any]:
            """Looks a topic up, slowly."""
            gate.calls += 1
            if gate.before is not None:
                gate.before(tool_context)
            gate.entered.set()
            await gate.release.wait()
            gate.finished += 1
            return {"result": f"all about {topic}"}

        return slow_lookup
