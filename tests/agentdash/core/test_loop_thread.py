"""A loop of its own in a daemon thread: runs coroutines for other threads, then stops; and a
call run on a loop from any thread (``call_on_loop``)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from agentdash.core.loop_thread import LoopThread, call_on_loop


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


async def test_at_once_on_the_loop_itself() -> None:
    calls: list[str] = []
    call_on_loop(asyncio.get_running_loop(), lambda: calls.append("now"))
    assert calls == ["now"]  # not left for the loop's next turn


def test_from_another_thread_on_the_loop_s_own_thread() -> None:
    own = LoopThread("test-call-on-loop")
    ran = threading.Event()
    threads: list[str] = []

    def call() -> None:
        threads.append(threading.current_thread().name)
        ran.set()

    try:
        call_on_loop(own.loop, call)
        assert ran.wait(10)
        assert threads == ["test-call-on-loop"]
    finally:
        own.stop(10)


def test_nothing_without_a_loop_or_on_a_closed_one() -> None:
    calls: list[int] = []
    call_on_loop(None, lambda: calls.append(1))
    closed = asyncio.new_event_loop()
    closed.close()
    call_on_loop(closed, lambda: calls.append(2))
    assert calls == []
