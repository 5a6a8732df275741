"""Stopping asyncio tasks for sure.

On Python 3.11, ``asyncio.wait_for`` returns the awaited call's result when a cancellation
arrives just as the call ends: the cancellation is lost (3.12 fixed it). The libraries under
the channel layer use it — redis-py writes each command under ``wait_for`` when its socket has
a timeout — so a task cancelled while it sends can go on as if nothing was asked of it. Seen
here: the control listener, probing Redis every 0.1 s, kept probing after it was cancelled
(in ~1 of 10 random cancellations at a 10 ms probe period), and whatever waited for it to end
— the run host's stop, a process's shutdown — waited forever.

The task still knows it was asked: ``Task.cancelling()`` counts the requests not taken back.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

# Longer than any clean-up of ours after a cancellation (the control listener leaves its group
# within 2 s): a second cancellation must not cut a clean-up short, only end a task that lost
# its first one.
AGAIN_AFTER_S = 5.0


def cancellation_kept() -> None:
    """Raise ``CancelledError`` when the current task was asked to stop and something it
    awaited swallowed the request. For loops that never take a cancellation back themselves:
    call it after each await of a library."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def tasks_ended(
    tasks: Iterable[asyncio.Task[object]], *, again_after: float = AGAIN_AFTER_S
) -> None:
    """Cancel ``tasks`` and return once every one has ended, cancelling again each one still
    running ``again_after`` seconds later (its cancellation was swallowed). Their outcomes are
    retrieved: an error of theirs is not logged as never retrieved."""
    tasks = list(tasks)
    pending = {task for task in tasks if not task.done()}
    for task in pending:
        task.cancel()
    while pending:
        _, pending = await asyncio.wait(pending, timeout=again_after)
        for task in pending:
            task.cancel()
    for task in tasks:
        if not task.cancelled():
            task.exception()
