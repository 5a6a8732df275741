"""Runs sub-agents at the same time, each on its own branch."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import aclosing

from runtime.agents.base_agent import BaseAgent
from runtime.contexts.invocation_context import InvocationContext
from runtime.events.event import Event

_DONE = object()


class ParallelAgent(BaseAgent):
    """Runs every sub-agent concurrently.

    Each runs on branch ``"<parent branch>.<this>.<sub>"``, so it does not see its siblings'
    turns in its model history; all share the session state. Events are yielded as they
    arrive; a branch waits until the consumer has taken (and so stored) each of its events
    before it goes on, so its next model call sees them. If one sub-agent fails, the others
    are cancelled and the error is raised.
    """

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        if not self.sub_agents:
            return
        queue: asyncio.Queue[object] = asyncio.Queue()
        base = f"{ctx.branch}.{self.name}" if ctx.branch else self.name

        async def drive(sub: BaseAgent) -> None:
            try:
                sub_ctx = ctx.for_agent(self, branch=f"{base}.{sub.name}")
                async with aclosing(sub.run_async(sub_ctx)) as events:
                    async for event in events:
                        taken = asyncio.Event()
                        await queue.put((event, taken))
                        await taken.wait()
            except BaseException as exc:  # handed to the consumer, which re-raises it
                await queue.put(exc)
            finally:
                await queue.put(_DONE)

        tasks = [asyncio.create_task(drive(sub)) for sub in self.sub_agents]
        running = len(tasks)
        try:
            while running:
                item = await queue.get()
                if item is _DONE:
                    running -= 1
                elif isinstance(item, BaseException):
                    raise item
                else:
                    assert isinstance(item, tuple)
                    event, taken = item
                    assert isinstance(event, Event)
                    yield event
                    taken.set()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
