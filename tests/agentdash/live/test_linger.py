"""How long the flusher lets work gather: a run's step — its stored spans and the changes
committed meanwhile — waits ``linger`` (its previews went out already) and goes out in one
flush; what someone waits for goes at once: a run's outcome, spans an export stored, the
partial text of a model still answering.

Each test sets a linger of a minute: what must go at once then comes well within the wait
that bounds it (``WAIT``), what must wait does not come at all."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from opentelemetry import trace

from agentdash.agent_sessions.models import AgentSession
from agentdash.live.pipeline import LivePipeline
from agentdash.runs.models import Run
from agentdash.runs.services import run_enqueue
from agentdash.runs.worker import run_execute
from agentdash.spans.services import spans_store
from agentdash.spans.span_version import SpanVersion
from runtime import LlmAgent, ScriptedLlm
from runtime.telemetry.attributes import GenAI
from tests.agentdash.live.conftest import (
    WAIT,
    Connect,
    changes_until,
    hello,
    nothing_more,
    receive,
)
from tests.agentdash.runs.conftest import says
from tests.agentdash.stored import session_of, store_event

pytestmark = pytest.mark.django_db(transaction=True)

A_MINUTE = 60.0
tracer = trace.get_tracer("tests.live.linger")


Watch = Callable[..., Awaitable[tuple[AgentSession, WebsocketCommunicator]]]


@pytest.fixture
def watch(
    connect: Connect, live: LivePipeline, alice: User, monkeypatch: pytest.MonkeyPatch
) -> Watch:
    """The pipeline's linger set to a minute; ``await watch(session_id, app_name=...)``: a
    session of alice's, and her socket on it, live (after its replay)."""
    monkeypatch.setattr(live, "linger", A_MINUTE)

    async def session_watched(
        session_id: str, app_name: str = "app"
    ) -> tuple[AgentSession, WebsocketCommunicator]:
        session = await sync_to_async(session_of)(alice, session_id, app_name=app_name)
        socket = await connect(alice, session.id)
        await hello(socket)
        return session, socket

    return session_watched


async def test_a_steps_changes_wait_for_the_step_and_go_out_in_one_message(
    watch: Watch, live: LivePipeline
) -> None:
    session, socket = await watch("s-linger-step")
    await sync_to_async(store_event)(session.id, "the model asks for a tool")
    await nothing_more(socket)  # committed, announced, and waiting for the rest of the step
    await sync_to_async(store_event)(session.id, "the tool answers")
    await nothing_more(socket)
    live.hurry_threadsafe()  # what a run's end does
    items, messages = await changes_until(socket, lambda items: len(items) == 2)
    assert [i["kind"] for i in items] == ["event", "event"]
    assert messages == 1


async def test_spans_an_export_stored_go_out_at_once_with_what_waited(
    watch: Watch, live: LivePipeline
) -> None:
    """An export's spans are stored outside the flusher and announced prompt: their sender
    waits to see them. The flush that sends them takes along what was lingering."""
    session, socket = await watch("s-linger-export")
    await sync_to_async(store_event)(session.id, "waiting for the step")
    await nothing_more(socket)
    version = SpanVersion(
        trace_id=uuid.uuid4().hex,
        span_id="00000000000000a1",
        name="exported",
        start_time=1_000,
        end_time=2_000,
        session_id=session.id,
    )
    await sync_to_async(spans_store)(versions=[version], announce=True)
    items, _ = await changes_until(socket, lambda items: len(items) == 2)
    assert [i["kind"] for i in items] == ["event", "span"]
    assert items[1]["data"]["name"] == "exported"


async def test_partial_text_goes_out_while_the_steps_spans_wait(
    watch: Watch, live: LivePipeline
) -> None:
    session, socket = await watch("s-linger-partial")
    await sync_to_async(store_event)(session.id, "a question")  # the session, stored and known
    with tracer.start_as_current_span("chat", attributes={GenAI.CONVERSATION_ID: session.id}):
        pass
    assert live.processor.pending_count() == 1  # the span's stored version, lingering
    await live.publish_partial(
        session_id=session.id, run_id=None, invocation_id="inv", author="bot", text="Hel"
    )
    while (message := await receive(socket))["type"] != "partial":
        assert message["type"] == "spans", message  # the span's preview, not stored yet
    assert message["text"] == "Hel"
    assert live.processor.pending_count() == 1  # sent without a flush


async def test_a_runs_outcome_goes_out_without_waiting_for_the_linger(
    watch: Watch, register: Callable[..., None], recorder: Any
) -> None:
    """The worker tells the stream a run is over once its outcome is stored: its spans
    (settled), its events and its end all reach the socket, the end last."""
    register(LlmAgent(name="talker", model=ScriptedLlm(responses=["Hello there."])))
    session, socket = await watch("s-linger-run", app_name="talker")
    queue = sync_to_async(run_enqueue)
    run = await queue(session=session, agent_name="talker", message=says("hi"), requested_by=None)
    await run_execute(run.pk, worker="w1")

    def ended(items: list[dict[str, Any]]) -> bool:
        runs = [i["data"]["status"] for i in items if i["kind"] == "run"]
        return Run.Status.SUCCEEDED in runs

    items, _ = await changes_until(socket, ended)
    assert items[-1]["kind"] == "run" and items[-1]["data"]["status"] == Run.Status.SUCCEEDED
    events = [i["data"]["author"] for i in items if i["kind"] == "event"]
    assert events == ["user", "talker"]
    spans = [i["data"] for i in items if i["kind"] == "span"]
    assert spans and all(s["end_time"] is not None for s in spans if s["name"] == "invocation")
    assert [i["seq"] for i in items] == sorted(i["seq"] for i in items)


async def test_stopping_sends_what_lingers_at_once(watch: Watch, live: LivePipeline) -> None:
    session, socket = await watch("s-linger-stop")
    await sync_to_async(store_event)(session.id, "said just before a shutdown")
    await asyncio.wait_for(live.stop(), WAIT)  # not a minute
    items, _ = await changes_until(socket, lambda items: bool(items))
    assert [i["kind"] for i in items] == ["event"]


async def test_a_full_batch_goes_without_waiting_out_the_linger(
    watch: Watch, live: LivePipeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A burst's spans are stored as soon as a batch is full, lingering or not."""
    session, socket = await watch("s-linger-full")
    await sync_to_async(store_event)(session.id, "a question")  # the session, stored and known
    monkeypatch.setattr(live.processor, "batch_size", 3)
    for n in range(3):
        with tracer.start_as_current_span(
            f"call {n}", attributes={GenAI.CONVERSATION_ID: session.id}
        ):
            pass
    items, _ = await changes_until(socket, lambda items: len(spans_in(items)) == 3)
    assert [i["data"]["name"] for i in spans_in(items)] == ["call 0", "call 1", "call 2"]


def spans_in(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [i for i in items if i["kind"] == "span"]
