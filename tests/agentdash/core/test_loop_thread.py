"""A loop of its own in a daemon thread: runs coroutines for other threads, then stops."""

from __future__ import annotations

import asyncio
import threading

import pytest

from agentdash.core.loop_thread import LoopThread


def test_it_runs_coroutines_on_its_own_thread_and_stops_cleanly() -> None:
    own = LoopThread("test-loop")

    async def where() -> tuple[str, asyncio.AbstractEventLoop]:
        return threading.current_thread().name, asyncio.get_running_loop()

    assert own.run(where(), timeout=5) == ("test-loop", own.loop)
    assert own.thread.daemon and own.thread.is_alive()

    async def fail() -> None:
        raise ValueError("told to")

    with pytest.raises(ValueError, match="told to"):  # the coroutine's error reaches the caller
        own.run(fail(), timeout=5)
    own.stop(timeout=5)
    assert not own.thread.is_alive() and own.loop.is_closed()
    own.stop(timeout=5)  # stopping twice is harmless
