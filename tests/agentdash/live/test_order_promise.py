"""The order promise (docs/PROTOCOL.md): a client never gets a run's end before the ends of
that run's spans — however far behind the live pipeline is, here while its flusher is busy
with an OTLP export of thousands of spans."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.test import Client
from google.genai import types
from opentelemetry import trace

from agentdash.agent_sessions.models import AgentSession
from agentdash.changes.models import SessionChange
from agentdash.changes.selectors import session_last_seq
from agentdash.ingest.keys import ingest_key_create
from agentdash.ingest.limits import limiter, sessions_limiter
from agentdash.ingest.services import SESSION_PREFIX
from agentdash.live.pipeline import LivePipeline
from agentdash.registry.loader import agents_cache_clear
from agentdash.runs.lifecycle import run_finish
from agentdash.runs.models import Run
from agentdash.runs.services import run_enqueue
from agentdash.runs.worker import run_execute
from agentdash.spans.models import Span
from runtime import LlmAgent, ScriptedLlm
from runtime.telemetry.attributes import AgentDash, GenAI
from tests.agentdash.ingest.otlp_bodies import PROTOBUF, request_of, span
from tests.agentdash.live.conftest import WAIT, Connect, changes_until, eventually, hello
from tests.agentdash.recording_executor import RecordingExecutor
from tests.agentdash.stored import session_of

pytestmark = pytest.mark.django_db(transaction=True)

AGENT = "order_agent"
FINISHED = {Run.Status.SUCCEEDED, Run.Status.FAILED, Run.Status.CANCELLED}
EXPORTED_SPANS = 3_000
TRACE = "5b8efff798038103d269b633813fc60c"

tracer = trace.get_tracer("tests.live.order")
order_agent: LlmAgent | None = None  # AGENTDASH["AGENTS"] names it: set by ``agent``


def look_up(city: str) -> dict[str, str]:
    """Look a city up."""
    return {"city": city, "country": "France"}


@pytest.fixture
def agent(settings: Any) -> Iterator[None]:
    """``order_agent`` (two tool calls, then an answer) is the configured agent."""
    global order_agent
    order_agent = LlmAgent(
        name=AGENT,
        model=ScriptedLlm(
            responses=[
                types.FunctionCall(name="look_up", args={"city": "Paris"}),
                types.FunctionCall(name="look_up", args={"city": "Lyon"}),
                "Both are in **France**.",
            ]
        ),
        tools=[look_up],
    )
    settings.AGENTDASH = {**settings.AGENTDASH, "AGENTS": [f"{__name__}:{AGENT}"]}
    agents_cache_clear()
    yield
    agents_cache_clear()


def export_body() -> bytes:
    """One OTLP export of ``EXPORTED_SPANS`` spans: an agent's root span and its steps."""
    root = "f000000000000000"
    start = 1_700_000_000_000_000_000
    steps = [
        span(
            TRACE,
            f"{i + 1:016x}",
            f"execute_tool step_{i}",
            parent=root,
            start=start + i,
            end=start + i + 1_000,
            gen_ai__operation__name="execute_tool",
        )
        for i in range(EXPORTED_SPANS - 1)
    ]
    top = span(
        TRACE,
        root,
        "invoke_agent loader",
        start=start,
        end=start + EXPORTED_SPANS + 1_000,
        gen_ai__conversation__id="load-1",
    )
    return request_of(top, *steps).SerializeToString()


def ingest(owner: User) -> int:
    """A real export through the view; the spans it stored."""
    limiter.forget()
    sessions_limiter.forget()
    key = ingest_key_create(name="load", project="loader", owner=owner, actor=None)[1]
    response = Client().post(
        "/v1/traces",
        data=export_body(),
        content_type=PROTOBUF,
        HTTP_AUTHORIZATION=f"Bearer {key}",
    )
    assert response.status_code == 200, response.content
    return Span.objects.filter(session__id__startswith=SESSION_PREFIX).count()


def run_finished(run_id: int) -> bool:
    return Run.objects.filter(pk=run_id, status__in=FINISHED).exists()


def run_changes(session_id: str, run: Run) -> tuple[int, list[int]]:
    """The seq of the change that ended ``run``, and those of its spans' changes."""
    spans = {
        f"{trace}:{span_id}"
        for trace, span_id in Span.objects.filter(run_id=run.pk).values_list("trace_id", "span_id")
    }
    changes = SessionChange.objects.filter(session_id=session_id).order_by("seq")
    run_seqs = [c.seq for c in changes if c.kind == "run" and c.ref == str(run.pk)]
    return run_seqs[-1], [c.seq for c in changes if c.kind == "span" and c.ref in spans]


class BusyWithAnExport:
    """The flusher busy with a real OTLP export of ``EXPORTED_SPANS`` spans: the flush that
    publishes it is slow (as 100k spans make it) until :meth:`release`."""

    def __init__(self, live: LivePipeline, monkeypatch: pytest.MonkeyPatch) -> None:
        self.busy, self.released = threading.Event(), threading.Event()
        write = live.writer.write

        def slow_with_the_export(*args: Any) -> Any:
            dirty = args[1]
            if any(s.startswith(SESSION_PREFIX) for s in dirty) and not self.released.is_set():
                self.busy.set()
                self.released.wait(timeout=WAIT)
            return write(*args)

        monkeypatch.setattr(live.writer, "write", slow_with_the_export)

    async def start(self, owner: User) -> None:
        assert await sync_to_async(ingest)(owner) == EXPORTED_SPANS
        await eventually(self.busy.is_set, "the flusher to be busy with the export")

    def release(self) -> None:
        self.released.set()


async def run_started(session: AgentSession) -> tuple[Run, asyncio.Task[None]]:
    """A run of ``order_agent`` in ``session``, executed by the worker as it is in a process
    that serves the site (the test's loop)."""
    question = types.Content(role="user", parts=[types.Part(text="Where are Paris and Lyon?")])
    run = await sync_to_async(run_enqueue)(
        session=session, agent_name=AGENT, message=question, requested_by=None
    )
    return run, asyncio.create_task(run_execute(run.pk, worker="w1"))


@pytest.mark.slow  # waits out the run's patience with the flusher (seconds)
async def test_a_run_ends_after_its_spans_while_the_flusher_is_busy_with_an_ingest(
    connect: Connect,
    live: LivePipeline,
    alice: User,
    agent: None,
    recorder: RecordingExecutor,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session = await sync_to_async(session_of)(alice, "s-order", AGENT)
    socket = await connect(alice, session.id)
    assert await hello(socket) == ([], 0)
    export = BusyWithAnExport(live, monkeypatch)

    async def ended_or_waiting(run_id: int) -> bool:
        # Either the run ended while the flusher was behind, or its end waits for it.
        return live.settle_waits > 0 or await sync_to_async(run_finished)(run_id)

    try:
        await export.start(alice)
        run, worker = await run_started(session)
        await eventually(lambda: ended_or_waiting(run.pk), "the run to end or to wait")
    finally:
        export.release()
    await asyncio.wait_for(worker, WAIT)
    run = await Run.objects.aget(pk=run.pk)
    assert run.status == Run.Status.SUCCEEDED
    assert live.settle_stores == 0  # the flusher stored them, reading the session with them
    await live.stop()  # stores and publishes whatever still waits

    # Recorded: the run's end has a higher seq than every change of its spans.
    ended, span_seqs = await sync_to_async(run_changes)(session.id, run)
    assert span_seqs and max(span_seqs) < ended

    # Received: in seq order, no run end before the last of its spans' ends.
    last = await sync_to_async(session_last_seq)(session_id=session.id)
    items, _ = await changes_until(socket, lambda got: bool(got) and got[-1]["seq"] >= last)
    assert [i["seq"] for i in items] == list(range(1, last + 1))
    open_spans: set[str] = set()
    ended_at: int | None = None
    for item in items:
        data = item["data"]
        if data is None:  # a run's change that a later one supersedes
            continue
        if item["kind"] == "span" and data["run_id"] == run.pk:
            assert ended_at is None, f"{data['name']} at seq {item['seq']}, after its run's end"
            identity = f"{data['trace_id']}:{data['span_id']}"
            (open_spans.add if data["end_time"] is None else open_spans.discard)(identity)
        if item["kind"] == "run" and data["id"] == run.pk and data["status"] in FINISHED:
            assert not open_spans, f"the run ends at seq {item['seq']} with spans open"
            ended_at = ended_at or item["seq"]
    assert ended_at is not None

    # Replayed, later, to a new client: the log read back as it is now still tells the
    # run's end after its spans' last changes (its earlier changes are superseded).
    late = await connect(alice, session.id)
    replayed, done = await hello(late)
    assert done == last and [i["seq"] for i in replayed] == list(range(1, last + 1))
    last_span = max(
        i["seq"] for i in replayed if i["kind"] == "span" and i["data"]["run_id"] == run.pk
    )
    told = [
        (i["seq"], i["data"]["status"])
        for i in replayed
        if i["kind"] == "run" and i["data"] is not None and i["data"]["id"] == run.pk
    ]
    assert told and all(seq > last_span for seq, status in told if status in FINISHED), told
    superseded = [i for i in replayed if i["kind"] == "run" and i.get("superseded")]
    assert superseded and all(i["data"] is None for i in superseded)


@pytest.mark.slow  # waits out the run's patience with the flusher (seconds)
async def test_a_flusher_stuck_past_the_runs_patience_still_gets_its_spans_first(
    live: LivePipeline,
    alice: User,
    agent: None,
    recorder: RecordingExecutor,
    monkeypatch: pytest.MonkeyPatch,
    settings: Any,
) -> None:
    # Little time before the reaper would take a run whose heartbeat stopped for dead.
    settings.AGENTDASH = {**settings.AGENTDASH, "RUN_HEARTBEAT_S": 2.0, "RUN_STALE_AFTER_S": 2.02}
    session = await sync_to_async(session_of)(alice, "s-order-stuck", AGENT)
    export = BusyWithAnExport(live, monkeypatch)
    try:
        await export.start(alice)
        run, worker = await run_started(session)
        # The flusher stays stuck until the run has ended: the run does not wait for it.
        await eventually(lambda: sync_to_async(run_finished)(run.pk), "the run to end")
    finally:
        export.release()
    await asyncio.wait_for(worker, WAIT)
    await live.stop()
    ended, span_seqs = await sync_to_async(run_changes)(session.id, run)
    assert span_seqs and max(span_seqs) < ended
    assert live.settle_stores == 1  # stored without the flusher


async def test_without_a_flusher_the_spans_are_stored_before_the_outcome(
    live: LivePipeline, alice: User
) -> None:
    session = await sync_to_async(session_of)(alice, "s-order-alone")
    run = await Run.objects.acreate(
        session=session,
        agent_name="helper",
        invocation_id="inv-alone",
        message={},
        status=Run.Status.RUNNING,
        attempt=1,
    )
    await live.stop()  # the spans still come in; nothing flushes them
    attributes = {GenAI.CONVERSATION_ID: session.id, AgentDash.INVOCATION_ID: "inv-alone"}
    with (
        tracer.start_as_current_span("invocation", attributes=attributes),
        tracer.start_as_current_span("execute_tool look_up"),
    ):
        pass
    await live.settle("inv-alone")
    assert await sync_to_async(run_finish)(run=run, status=Run.Status.SUCCEEDED)
    ended, span_seqs = await sync_to_async(run_changes)(session.id, run)
    assert len(span_seqs) == 2 and max(span_seqs) < ended
