"""Sync tool functions off the event loop (``runtime.tools.sync_calls``): outcomes and the
caller's context reach the call and come back; quick calls follow one another on one
thread; a call that blocks never holds up the loop or the calls behind it; a loop that
closes while its call runs leaves the pool working for the others."""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from runtime.tools import sync_calls
from runtime.tools.function_tool import FunctionTool
from runtime.tools.sync_calls import SyncCalls

who = contextvars.ContextVar("who", default="nobody")


def greet(name: str) -> str:
    said = f"{who.get()} greets {name}"
    who.set("changed in the call")  # a copy: the caller's stays
    return said


def fail(message: str) -> None:
    raise KeyError(message)


async def test_results_errors_and_the_callers_context() -> None:
    calls = SyncCalls()
    who.set("alice")
    assert await calls.run(greet, name="bob") == "alice greets bob"
    assert who.get() == "alice"
    with pytest.raises(KeyError, match="no such thing"):
        await calls.run(fail, message="no such thing")


async def test_quick_calls_follow_one_another_on_one_thread() -> None:
    calls = SyncCalls(held_up=3600.0)  # no call ever counts as held up here
    ran_on = await asyncio.gather(*(calls.run(threading.get_ident) for _ in range(300)))
    assert len(set(ran_on)) == 1 and threading.get_ident() not in ran_on
    assert calls.threads == 1


async def test_a_blocking_call_holds_up_neither_the_loop_nor_the_calls_behind_it() -> None:
    calls = SyncCalls(held_up=0.001)
    release = threading.Event()
    blocked = asyncio.ensure_future(calls.run(release.wait, timeout=60))
    try:
        async with asyncio.timeout(30):
            await asyncio.sleep(0)  # the loop turns while the call blocks
            assert await calls.run(greet, name="carol") == "nobody greets carol"
        assert not blocked.done() and calls.threads == 2
    finally:
        release.set()
    assert await blocked is True


async def test_a_cancelled_caller_gets_no_outcome_and_the_pool_goes_on() -> None:
    calls = SyncCalls()
    release = threading.Event()
    waiting = asyncio.ensure_future(calls.run(release.wait, timeout=60))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    release.set()
    assert await calls.run(greet, name="dan") == "nobody greets dan"


def test_a_loop_that_closes_while_its_call_runs_leaves_the_pool_working() -> None:
    calls = SyncCalls()
    release, started = threading.Event(), threading.Event()

    def slow() -> str:
        started.set()
        release.wait(60)
        return "late"

    async def give_up() -> None:
        task = asyncio.ensure_future(calls.run(slow))
        await asyncio.get_running_loop().run_in_executor(None, started.wait, 60)
        task.cancel()

    asyncio.run(give_up())  # its loop is closed now; the call still runs
    release.set()
    assert asyncio.run(calls.run(greet, name="erin")) == "nobody greets erin"


async def test_a_sync_tools_own_spans_are_children_of_its_call() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")

    def look_up(city: str) -> dict:
        """Look a city up."""
        with tracer.start_as_current_span("inside"):
            return {"city": city}

    tool = FunctionTool(look_up)
    with tracer.start_as_current_span("the tool call"):
        assert await tool.run_async(args={"city": "Paris"}, tool_context=None) == {"city": "Paris"}
    inside, call = exporter.get_finished_spans()
    assert inside.parent is not None and inside.parent.span_id == call.context.span_id


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX's")
def test_a_forked_child_runs_calls_on_threads_of_its_own() -> None:
    asyncio.run(sync_calls.run_sync(greet, name="before the fork"))  # the parent has a thread
    child = os.fork()
    if child == 0:  # the child: exit 0 only if its call ran
        try:
            said = asyncio.run(asyncio.wait_for(sync_calls.run_sync(greet, name="f"), 30))
            os._exit(0 if said == "nobody greets f" else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
