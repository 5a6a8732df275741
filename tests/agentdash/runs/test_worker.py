"""run_execute: the claim, the heartbeat, the outcome of a run (succeeded, failed, cancelled)
and what the chat is told."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from google.genai import types
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.changes.models import SessionChange
from agentdash.live.pipeline import LivePipeline
from agentdash.runs.models import Run
from agentdash.runs.services import arun_enqueue, run_cancel_request, run_enqueue
from agentdash.runs.worker import run_execute
from agentdash.spans.models import Span
from runtime import CallbackContext, LlmAgent, LlmRequest, ScriptedLlm
from tests.agentdash.recording_executor import RecordingExecutor
from tests.agentdash.runs.conftest import run_ended, says, wait_for
from tests.agentdash.runs.gates import Gate

pytestmark = pytest.mark.django_db(transaction=True)

MakeSession = Callable[[str], AgentSession]


async def enqueue(session: AgentSession, agent: str, text: str = "hi") -> Run:
    queue = sync_to_async(run_enqueue)
    run: Run = await queue(session=session, agent_name=agent, message=says(text), requested_by=None)
    return run


async def stored_events(session: AgentSession) -> list[dict[str, Any]]:
    rows = (
        SessionEvent.objects.filter(session=session).order_by("seq").values_list("data", flat=True)
    )
    return [data async for data in rows]


async def test_two_deliveries_of_one_run_execute_it_once(
    register: Callable[..., None],
    make_session: MakeSession,
    recorder: RecordingExecutor,
    spans: InMemorySpanExporter,
) -> None:
    llm = ScriptedLlm(responses=["Hello there."])
    register(LlmAgent(name="once_agent", model=llm))
    session = await sync_to_async(make_session)("once_agent")
    run = await enqueue(session, "once_agent")
    assert recorder.submitted == [run.pk]

    await asyncio.gather(run_execute(run.pk, worker="w1"), run_execute(run.pk, worker="w2"))

    assert len(llm.requests) == 1
    stored = await Run.objects.aget(pk=run.pk)
    assert (stored.status, stored.attempt, stored.error) == (Run.Status.SUCCEEDED, 1, "")
    assert stored.worker in ("w1", "w2") and stored.finished_at is not None
    invocation = next(s for s in spans.get_finished_spans() if s.name.startswith("invocation"))
    assert stored.trace_id == format(invocation.context.trace_id, "032x")
    events = await stored_events(session)
    assert [e["author"] for e in events] == ["user", "once_agent"]
    assert {e["invocation_id"] for e in events} == {run.invocation_id}

    await run_execute(run.pk, worker="w3")  # a late duplicate: nothing happens
    assert len(llm.requests) == 1
    assert (await Run.objects.aget(pk=run.pk)).worker == stored.worker


async def test_the_heartbeat_is_written_while_the_run_works(
    register: Callable[..., None], make_session: MakeSession, recorder: RecordingExecutor, host: Any
) -> None:
    gate = Gate()
    call = types.FunctionCall(name="slow_lookup", args={"topic": "tea"})
    register(
        LlmAgent(name="slow_agent", model=ScriptedLlm(responses=[call, "Done."]), tools=[gate.tool])
    )
    session = await sync_to_async(make_session)("slow_agent")
    run = await enqueue(session, "slow_agent")
    task = asyncio.create_task(run_execute(run.pk, worker="w1"))
    await asyncio.wait_for(gate.entered.wait(), 60)
    first = (await Run.objects.aget(pk=run.pk)).heartbeat_at
    assert first is not None

    async def beaten() -> bool:
        later = (await Run.objects.aget(pk=run.pk)).heartbeat_at
        return later is not None and later > first

    await wait_for(beaten, what="a newer heartbeat")
    gate.release.set()
    await task
    assert (await Run.objects.aget(pk=run.pk)).status == Run.Status.SUCCEEDED


async def test_a_raising_callback_fails_the_run_and_tells_the_chat(
    register: Callable[..., None], make_session: MakeSession, recorder: RecordingExecutor
) -> None:
    def refuse_everything(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
        raise ValueError("no model for you")

    llm = ScriptedLlm(responses=["never sent"])
    register(LlmAgent(name="boom_agent", model=llm, before_model_callback=refuse_everything))
    session = await sync_to_async(make_session)("boom_agent")
    run = await enqueue(session, "boom_agent")

    await run_execute(run.pk, worker="w1")

    stored = await Run.objects.aget(pk=run.pk)
    assert stored.status == Run.Status.FAILED
    assert stored.error.startswith(
        "CallbackError: callback 'refuse_everything' (before_model) of agent 'boom_agent' "
        "raised ValueError: no model for you"
    )
    assert llm.requests == []
    last = (await stored_events(session))[-1]
    assert (last["author"], last["invocation_id"]) == ("boom_agent", run.invocation_id)
    assert last["error_code"] == "CALLBACK_ERROR"
    assert "The run failed: CallbackError: callback 'refuse_everything'" in last["error_message"]

    # The worker carries on: the next run succeeds.
    register(LlmAgent(name="fine_agent", model=ScriptedLlm(responses=["Fine."])))
    other = await enqueue(await sync_to_async(make_session)("fine_agent"), "fine_agent")
    await run_execute(other.pk, worker="w1")
    assert (await Run.objects.aget(pk=other.pk)).status == Run.Status.SUCCEEDED


async def test_cancel_stops_a_run_blocked_in_a_tool_and_the_worker_goes_on(
    register: Callable[..., None], make_session: MakeSession, host: Any
) -> None:
    gate = Gate()
    call = types.FunctionCall(name="slow_lookup", args={"topic": "tea"})
    llm = ScriptedLlm(responses=[call, "Never said."])
    register(LlmAgent(name="stuck_agent", model=llm, tools=[gate.tool]))
    session = await sync_to_async(make_session)("stuck_agent")
    run = await arun_enqueue(
        session=session, agent_name="stuck_agent", message=says("tea?"), requested_by=None
    )
    await asyncio.wait_for(gate.entered.wait(), 60)
    assert (await Run.objects.aget(pk=run.pk)).status == Run.Status.RUNNING

    await sync_to_async(run_cancel_request)(run=run, actor=None, reason="taking too long")

    stored = await run_ended(run.pk)
    assert stored.status == Run.Status.CANCELLED
    assert (stored.error, stored.cancel_reason) == ("Cancelled: taking too long", "taking too long")
    assert gate.finished == 0 and len(llm.requests) == 1  # stopped inside the tool
    events = await stored_events(session)
    assert [e["author"] for e in events] == ["user", "stuck_agent", "stuck_agent"]
    assert (events[-1]["error_code"], events[-1]["error_message"]) == (
        "CANCELLED",
        "Cancelled: taking too long",
    )

    # The same executor runs the next one.
    other_session = await sync_to_async(make_session)("capital_agent")
    other = await arun_enqueue(
        session=other_session,
        agent_name="capital_agent",
        message=says("What is the capital of Japan?"),
        requested_by=None,
    )
    assert (await run_ended(other.pk)).status == Run.Status.SUCCEEDED


async def test_a_run_ends_after_its_spans_in_the_sessions_changes(
    register: Callable[..., None],
    make_session: MakeSession,
    recorder: RecordingExecutor,
    live: LivePipeline,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(live, "linger", 0.3)  # the run's last spans are still waiting at its end
    register(LlmAgent(name="ordered_agent", model=ScriptedLlm(responses=["Done."])))
    session = await sync_to_async(make_session)("ordered_agent")
    run = await enqueue(session, "ordered_agent")

    await run_execute(run.pk, worker="w1")

    changes = [c async for c in SessionChange.objects.filter(session=session).order_by("seq")]
    finished = max(c.seq for c in changes if c.kind == "run" and c.ref == str(run.pk))
    span_seqs = [c.seq for c in changes if c.kind == "span"]
    assert span_seqs and max(span_seqs) < finished  # a client seeing the end has every span
    assert not await Span.objects.filter(session=session, end_time__isnull=True).aexists()


class CountingLlm(ScriptedLlm):
    """A scripted model that counts the chunks it has streamed so far (and never waits)."""

    streamed: int = 0

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> Any:
        async for response in super().generate_content_async(llm_request, stream):
            self.streamed += 1
            yield response


async def test_a_stream_that_never_waits_leaves_the_loop_to_others(
    register: Callable[..., None], make_session: MakeSession, recorder: RecordingExecutor
) -> None:
    """The worker gives the loop a turn after each event: the heartbeat, the flusher and the
    server's other requests run while a model streams without ever waiting (a word-by-word
    stream of a long answer held the loop for seconds, and the reaper took the run)."""
    words = 2_000
    llm = CountingLlm(responses=[" ".join(["word"] * words)])
    register(LlmAgent(name="fast_streamer", model=llm))
    session = await sync_to_async(make_session)("fast_streamer")
    run = await enqueue(session, "fast_streamer")
    seen: set[int] = set()
    done = asyncio.Event()

    async def other_task() -> None:  # what the heartbeat or a request would be
        while not done.is_set():
            seen.add(llm.streamed)
            await asyncio.sleep(0)

    other = asyncio.create_task(other_task())
    await run_execute(run.pk, worker="w1")
    done.set()
    await other
    assert (await Run.objects.aget(pk=run.pk)).status == Run.Status.SUCCEEDED
    # The other task ran between the chunks, not only before the first and after the last.
    between = {n for n in seen if 0 < n < words}
    assert len(between) > words // 2, f"the loop was free at {len(between)} of {words} chunks"


async def test_the_heartbeat_goes_on_while_the_runs_spans_settle(
    register: Callable[..., None],
    make_session: Callable[[str], AgentSession],
    host: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Settling a run's spans can take seconds under an ingest's load: the run must keep
    beating until its outcome is stored, or the reaper takes a live run for a dead one (the
    heartbeat stopped as soon as the agent's work was over)."""
    from agentdash.runs import worker

    register(LlmAgent(name="settling_agent", model=ScriptedLlm(responses=["Done."])))
    session = await sync_to_async(make_session)("settling_agent")
    seen: list[Any] = []

    async def slow_settle(invocation_id: str) -> None:
        run = await Run.objects.aget(invocation_id=invocation_id)
        before = run.heartbeat_at

        async def beaten() -> bool:
            found = await Run.objects.aget(pk=run.pk)
            return found.heartbeat_at != before

        seen.append(await wait_for(beaten, timeout=10, what="a heartbeat while settling"))

    monkeypatch.setattr(worker.streaming, "settle", slow_settle)
    run = await arun_enqueue(
        session=session, agent_name="settling_agent", message=says("hi"), requested_by=None
    )
    assert (await run_ended(run.pk)).status == Run.Status.SUCCEEDED
    assert seen == [True]


async def test_an_attempt_that_made_no_span_leaves_no_trace(
    register: Callable[..., None],
    make_session: MakeSession,
    recorder: RecordingExecutor,
    settings: Any,
) -> None:
    """The claim writes the trace it chose for the attempt; an attempt that fails before its
    first span (its agent is gone) takes that trace back: the run points at no empty trace."""
    from agentdash.live.pipeline import live_pipeline
    from agentdash.registry.loader import agents_cache_clear
    from runtime.telemetry.trace_ids import chosen_trace_ids

    register(LlmAgent(name="fleeting_agent", model=ScriptedLlm(responses=["Hi."])))
    session = await sync_to_async(make_session)("fleeting_agent")
    run = await enqueue(session, "fleeting_agent")
    live_pipeline().install()  # the tracer provider hands out chosen trace ids
    try:
        assert chosen_trace_ids()
        settings.AGENTDASH = {**settings.AGENTDASH, "AGENTS": ["agentdash.demo.capital:root_agent"]}
        agents_cache_clear()

        await run_execute(run.pk, worker="w1")
    finally:
        live_pipeline().uninstall()

    stored = await Run.objects.aget(pk=run.pk)
    assert stored.status == Run.Status.FAILED and "fleeting_agent" in stored.error
    assert stored.trace_id == ""
