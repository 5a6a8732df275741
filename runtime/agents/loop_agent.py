"""Runs sub-agents in a loop until one escalates or the iterations run out."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from runtime.agents.base_agent import BaseAgent
from runtime.contexts.invocation_context import InvocationContext
from runtime.events.event import Event


class LoopAgent(BaseAgent):
    """Runs ``sub_agents`` in order, again and again.

    When a sub-agent's event carries ``actions.escalate`` that sub-agent finishes its turn and
    the loop stops (the rest of that pass does not run). It also stops after
    ``max_iterations`` passes (``None``: no limit) or when the invocation ends.
    """

    max_iterations: int | None

    def __init__(self, *, max_iterations: int | None = None, **kwargs: Any) -> None:
        if max_iterations is not None and max_iterations < 1:
            raise ValueError("max_iterations must be at least 1, or None for no limit")
        super().__init__(**kwargs)
        self.max_iterations = max_iterations

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        if not self.sub_agents:
            return
        iteration = 0
        while self.max_iterations is None or iteration < self.max_iterations:
            iteration += 1
            for sub in self.sub_agents:
                escalated = False
                async with aclosing(sub.run_async(ctx)) as events:
                    async for event in events:
                        yield event
                        escalated = escalated or bool(event.actions.escalate)
                if escalated or ctx.end_invocation:
                    return
