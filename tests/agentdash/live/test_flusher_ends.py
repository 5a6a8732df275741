"""However the flusher ends, no one is left waiting on it: a stop its caller gave up leaves it
to finish its flushes, and a flusher cancelled all the same lets go whoever waited for a
flush (a run held back by backpressure, a run settling its spans)."""

from __future__ import annotations

import asyncio

import pytest

from agentdash.live.pipeline import LivePipeline
from tests.agentdash.live.conftest import WAIT

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_stop_given_up_leaves_the_flusher_to_finish(live: LivePipeline) -> None:
    flusher = live._task
    assert flusher is not None
    stopping = asyncio.create_task(live.stop())
    for _ in range(3):
        await asyncio.sleep(0)  # the stop waits for the flusher's last flushes
    stopping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stopping
    await asyncio.wait_for(asyncio.shield(flusher), WAIT)
    assert not flusher.cancelled()


async def test_a_cancelled_flusher_lets_its_waiters_go(live: LivePipeline) -> None:
    flusher = live._task
    assert flusher is not None
    # What backpressure and a settle do: have it flush, again and again, while behind.
    waiting = asyncio.create_task(live._wait_while(lambda: True))
    for _ in range(3):
        await asyncio.sleep(0)
    flusher.cancel()
    with pytest.raises(asyncio.CancelledError):
        await flusher
    await asyncio.wait_for(waiting, WAIT)  # not running any more: nothing to wait for
    assert not live.running
