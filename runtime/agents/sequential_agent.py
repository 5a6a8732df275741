"""Runs sub-agents one after another."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing

from runtime.agents.base_agent import BaseAgent
from runtime.contexts.invocation_context import InvocationContext
from runtime.events.event import Event


class SequentialAgent(BaseAgent):
    """Runs ``sub_agents`` in order, each seeing what the earlier ones wrote to the session."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        for sub in self.sub_agents:
            async with aclosing(sub.run_async(ctx)) as events:
                async for event in events:
                    yield event
            if ctx.end_invocation:
                return
