"""A run's task caught a cancellation: its heartbeat's stop alone is taken back (the run then
records how it ended), never a stop of the process that came with it."""

from __future__ import annotations

import asyncio

import pytest

from agentdash.runs.worker import _stopped_by_its_heartbeat_alone, _Watch


async def caught(cancels: int, stop: str | None) -> tuple[bool, int]:
    """A task cancelled ``cancels`` times at once, its watch's ``stop`` set as its heartbeat
    would: (taken back, cancellations still pending)."""
    found: list[tuple[bool, int]] = []

    async def run() -> None:
        me = asyncio.current_task()
        assert me is not None
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            watch = _Watch()
            watch.stop = stop
            found.append((_stopped_by_its_heartbeat_alone(me, watch), me.cancelling()))

    task = asyncio.create_task(run())
    await asyncio.sleep(0)
    for _ in range(cancels):
        task.cancel()
    await task
    return found[0]


@pytest.mark.parametrize(
    ("cancels", "stop", "expected"),
    [
        (1, "cancel", (True, 0)),  # an operator's stop: recorded as cancelled
        (1, "lost", (True, 0)),  # reaped meanwhile
        (1, None, (False, 1)),  # the process stops
        (2, "cancel", (False, 1)),  # both at once: one CancelledError, the stop kept
    ],
)
async def test_only_the_heartbeats_own_stop_is_taken_back(
    cancels: int, stop: str | None, expected: tuple[bool, int]
) -> None:
    assert await caught(cancels, stop) == expected
