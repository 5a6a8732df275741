"""The inline executor end to end, on the test's event loop: the capital demo agent on the
offline model, the concurrency bound, and the live pipeline storing the run's spans."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from google.genai import types

from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.agent_sessions.selectors import session_state_view
from agentdash.changes.models import SessionChange
from agentdash.live.pipeline import live_pipeline
from agentdash.runs.executors import InlineExecutor, executor_get, executor_reset
from agentdash.runs.host import run_host
from agentdash.runs.models import Run
from agentdash.runs.services import arun_enqueue, run_enqueue
from agentdash.spans.models import Span
from runtime import LlmAgent, ScriptedLlm
from tests.agentdash.runs.conftest import FINISHED, run_ended, says, wait_for
from tests.agentdash.runs.gates import Gate
from tests.waits import until

pytestmark = pytest.mark.django_db(transaction=True)

MakeSession = Callable[[str], AgentSession]


async def test_the_capital_agent_runs_on_the_servers_loop(
    register: Callable[..., None], make_session: MakeSession, host: Any
) -> None:
    register()
    session = await sync_to_async(make_session)("capital_agent")
    run = await arun_enqueue(
        session=session,
        agent_name="capital_agent",
        message=says("What is the capital of Canada?"),
        requested_by=None,
    )
    assert isinstance(executor_get(), InlineExecutor)
    assert host.loop is asyncio.get_running_loop()

    stored = await run_ended(run.pk)

    assert (stored.status, stored.attempt, stored.error) == (Run.Status.SUCCEEDED, 1, "")
    assert stored.worker == host.worker_name and len(stored.trace_id) == 32
    rows = [
        row
        async for row in SessionEvent.objects.filter(session=session)
        .order_by("seq")
        .values("author", "data")
    ]
    assert [r["author"] for r in rows] == ["user", *["capital_agent"] * 3]
    answer = rows[-1]["data"]["content"]["parts"][0]["text"]
    assert "Paris" in answer and answer.endswith("(checked by after_model)")
    state = (await sync_to_async(session_state_view)(session_id=session.id)).state
    assert state["last_capital_lookup"] == "France" and state["last_answer"] == answer

    # Every change is in the session's log: the run's (queued, running with its trace,
    # succeeded with its totals, and its totals growing before: one per flush that stored a
    # model call of it before it settled — the agent made two; the settle's flush leaves
    # them to the end), the events', and, stored by the live pipeline, the spans'.
    kinds = [k async for k in SessionChange.objects.filter(session=session).values_list("kind")]
    assert 3 <= [k for (k,) in kinds].count("run") <= 3 + 2
    assert [k for (k,) in kinds].count("event") == 4

    async def spans_stored() -> bool:
        names = [
            n
            async for n in Span.objects.filter(
                trace_id=stored.trace_id, end_time__isnull=False
            ).values_list("name", flat=True)
        ]
        return "invocation capital_agent" in names and "execute_tool get_capital_city" in names

    await wait_for(spans_stored, what="the run's spans in the database")


async def test_no_more_runs_at_once_than_the_bound(
    register: Callable[..., None], make_session: MakeSession, host: Any, settings: Any
) -> None:
    settings.AGENTDASH = {**settings.AGENTDASH, "INLINE_CONCURRENCY": 1}
    executor_reset()
    gate = Gate()
    call = types.FunctionCall(name="slow_lookup", args={"topic": "tea"})
    register(
        LlmAgent(
            name="slow_agent",
            model=ScriptedLlm(responses=[call, "First done.", "Second done."]),
            tools=[gate.tool],
        )
    )
    session = await sync_to_async(make_session)("slow_agent")
    first = await arun_enqueue(
        session=session, agent_name="slow_agent", message=says("tea"), requested_by=None
    )
    await asyncio.wait_for(gate.entered.wait(), 60)
    second = await arun_enqueue(
        session=session, agent_name="slow_agent", message=says("again"), requested_by=None
    )
    for _ in range(20):  # give the second every chance to start (it must not)
        await asyncio.sleep(0.01)
    assert (await Run.objects.aget(pk=second.pk)).status == Run.Status.QUEUED

    gate.release.set()
    assert (await run_ended(first.pk)).status == Run.Status.SUCCEEDED
    assert (await run_ended(second.pk)).status == Run.Status.SUCCEEDED


async def test_the_first_enqueue_starts_the_executor_on_the_callers_loop(
    register: Callable[..., None], make_session: MakeSession, inline: Any
) -> None:
    register(LlmAgent(name="lazy_agent", model=ScriptedLlm(responses=["Up."])))
    session = await sync_to_async(make_session)("lazy_agent")
    assert inline.loop is None

    run = await arun_enqueue(
        session=session, agent_name="lazy_agent", message=says("hi"), requested_by=None
    )

    assert inline.loop is asyncio.get_running_loop()
    assert (await run_ended(run.pk)).status == Run.Status.SUCCEEDED


async def test_an_enqueue_from_sync_code_finds_the_loop_that_called_it(
    register: Callable[..., None], make_session: MakeSession, inline: Any
) -> None:
    """A sync view under daphne runs in a thread that async code called into: the run goes
    to that code's loop (the server's), not to a loop of its own."""
    register(LlmAgent(name="sync_agent", model=ScriptedLlm(responses=["From a view."])))
    session = await sync_to_async(make_session)("sync_agent")

    run = await sync_to_async(run_enqueue)(
        session=session, agent_name="sync_agent", message=says("hi"), requested_by=None
    )

    assert (await run_ended(run.pk)).status == Run.Status.SUCCEEDED
    assert inline.loop is asyncio.get_running_loop()


def test_sync_code_with_no_loop_around_gets_a_run_loop_of_its_own(
    register: Callable[..., None], make_session: MakeSession, settings: Any
) -> None:
    """A management command or a shell: the runs go to a loop in a daemon thread."""
    settings.AGENTDASH = {**settings.AGENTDASH, "EXECUTOR": "inline", "RUN_HEARTBEAT_S": 0.05}
    executor_reset()
    register(LlmAgent(name="own_loop_agent", model=ScriptedLlm(responses=["Alone."])))
    session = make_session("own_loop_agent")
    host = run_host()
    try:
        run = run_enqueue(
            session=session, agent_name="own_loop_agent", message=says("hi"), requested_by=None
        )
        until(lambda: Run.objects.get(pk=run.pk).status in FINISHED, "the run to end")
        assert Run.objects.get(pk=run.pk).status == Run.Status.SUCCEEDED
        assert host.loop is not None and host.loop.is_running()
    finally:
        host.stop_thread()
        executor_reset()
        live_pipeline().uninstall()
    assert host.loop is None


async def test_a_run_has_its_trace_from_its_claim_and_its_spans_are_in_it(
    register: Callable[..., None], make_session: MakeSession, host: Any
) -> None:
    """The claim chooses the attempt's trace and writes it with the run's start, so a client
    knows it before the first span; the run's spans come in that trace, and no change of the
    run is spent on recording it later."""
    gate = Gate()
    call = types.FunctionCall(name="slow_lookup", args={"topic": "tea"})
    register(LlmAgent(name="traced_agent", model=ScriptedLlm(responses=[call, "Done."]),
                      tools=[gate.tool]))  # fmt: skip
    session = await sync_to_async(make_session)("traced_agent")
    run = await arun_enqueue(
        session=session, agent_name="traced_agent", message=says("tea?"), requested_by=None
    )
    await asyncio.wait_for(gate.entered.wait(), 60)
    running = await Run.objects.aget(pk=run.pk)
    assert running.status == Run.Status.RUNNING and len(running.trace_id) == 32
    kinds = [k async for k in SessionChange.objects.filter(session=session).values_list("kind")]
    changes_while_running = [k for (k,) in kinds].count("run")

    gate.release.set()
    stored = await run_ended(run.pk)

    assert (stored.status, stored.trace_id) == (Run.Status.SUCCEEDED, running.trace_id)
    await live_pipeline().settle(run.invocation_id)
    traces = {t async for t in Span.objects.filter(run=run).values_list("trace_id", flat=True)}
    assert traces == {running.trace_id}
    assert changes_while_running == 2  # queued, running (with its trace): nothing since
