"""Stopping tasks whose awaited calls may swallow a cancellation (``core/tasks.py``)."""

from __future__ import annotations

import asyncio

from agentdash.core.tasks import cancellation_kept, tasks_ended


async def _swallowing(steps: list[str]) -> None:
    """What a library's ``asyncio.wait_for`` can do on 3.11: take a cancellation and return
    (the first one only, here)."""
    if steps:
        await asyncio.sleep(3600)
        return
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        steps.append("swallowed")


async def test_a_loop_that_checks_ends_when_a_callee_swallowed_its_cancellation() -> None:
    steps: list[str] = []

    async def loop() -> None:
        while True:
            await _swallowing(steps)
            cancellation_kept()
            steps.append("went on")

    task = asyncio.create_task(loop())
    await asyncio.sleep(0)
    task.cancel()
    done, _ = await asyncio.wait([task], timeout=30)
    assert done and task.cancelled()
    assert steps == ["swallowed"]


async def test_a_loop_that_was_not_asked_to_stop_goes_on() -> None:
    async def loop() -> int:
        for _ in range(3):
            await asyncio.sleep(0)
            cancellation_kept()
        return 3

    assert await loop() == 3


async def test_tasks_ended_cancels_again_a_task_that_swallowed_the_first_cancellation() -> None:
    steps: list[str] = []

    async def stubborn() -> None:
        while True:  # no check of its own: only a second cancellation ends it
            await _swallowing(steps)

    async def plain() -> None:
        await asyncio.sleep(3600)

    async def failing() -> None:
        raise ValueError("its own error")

    tasks = [asyncio.create_task(stubborn()), asyncio.create_task(plain())]
    tasks.append(asyncio.create_task(failing()))
    await asyncio.sleep(0)
    await asyncio.wait_for(tasks_ended(tasks, again_after=0.01), 30)
    assert all(task.done() for task in tasks)
    assert tasks[0].cancelled() and tasks[1].cancelled()
    assert isinstance(tasks[2].exception(), ValueError)  # retrieved, not raised here
    assert steps == ["swallowed"]


async def test_tasks_ended_with_nothing_running_returns_at_once() -> None:
    done = asyncio.create_task(asyncio.sleep(0))
    await done
    await tasks_ended([done])
    await tasks_ended([])
