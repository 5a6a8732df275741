"""Exports of what a real run stored — the runtime's spans through the live pipeline — and
how daphne's side (ASGI) sends them: part by part, as they are read."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.test import AsyncClient
from django.urls import reverse
from google.genai import types

from agentdash.agent_sessions.models import AgentSession
from agentdash.agent_sessions.session_service import DjangoSessionService
from agentdash.live.pipeline import LivePipeline
from agentdash.spans.models import Span
from agentdash.spans.services import spans_store
from agentdash.spans.span_version import SpanVersion
from runtime import LlmAgent, Runner, ScriptedLlm
from tests.agentdash.otlp_receiver import otlp_parse, otlp_print, strict_json
from tests.agentdash.stored import session_of

pytestmark = pytest.mark.django_db(transaction=True)


def capital_agent() -> LlmAgent:
    def get_capital_city(country: str) -> str:
        """Retrieves the capital city of a given country."""
        return {"france": "Paris"}.get(country.lower(), "unknown")

    def note(callback_context: Any, llm_request: Any) -> None:
        return None

    return LlmAgent(
        name="capital_agent",
        model=ScriptedLlm(
            responses=[
                types.FunctionCall(name="get_capital_city", args={"country": "France"}),
                "The capital of France is Paris.",
            ]
        ),
        tools=[get_capital_city],
        before_model_callback=note,
    )


async def drive(session: AgentSession, text: str) -> None:
    runner = Runner(agent=capital_agent(), app_name="app", session_service=DjangoSessionService())
    message = types.Content(role="user", parts=[types.Part(text=text)])
    async for _ in runner.run_async(
        user_id=session.user_id, session_id=session.id, new_message=message
    ):
        pass


async def download(client: AsyncClient, path: str) -> list[bytes]:
    response = await client.get(path)
    assert response.status_code == 200
    assert response.is_async, "under ASGI the parts are read one at a time, in a thread"
    return [part async for part in response.streaming_content]


async def test_a_real_runs_trace_loads_in_an_otlp_parser_with_its_tree_whole(
    live: LivePipeline, alice: User
) -> None:
    session = await sync_to_async(session_of)(alice, "export-live")
    await drive(session, "What is the capital of France?")
    await live.stop()  # every span stored
    client = AsyncClient()
    await client.aforce_login(alice)
    path = reverse("dashboard:session_export_otlp", kwargs={"session_id": session.id})
    text = b"".join(await download(client, path))

    message = otlp_parse(text)
    assert otlp_print(message) == strict_json(text)
    spans = list(message.resource_spans[0].scope_spans[0].spans)
    rows = await sync_to_async(lambda: list(Span.objects.filter(session=session)))()
    assert len(spans) == len(rows) >= 5
    assert {(s.trace_id.hex(), s.span_id.hex()) for s in spans} == {
        (r.trace_id, r.span_id) for r in rows
    }
    names = [s.name for s in spans]
    assert any(n.startswith("invoke_agent") for n in names)
    assert any(n.startswith("generate_content") for n in names)
    assert "execute_tool get_capital_city" in names
    # One tree: every parent is in the export, one root.
    ids = {s.span_id for s in spans}
    roots = [s for s in spans if not s.parent_span_id]
    assert len(roots) == 1
    assert all(s.parent_span_id in ids for s in spans if s.parent_span_id)
    tool = next(s for s in spans if s.name == "execute_tool get_capital_city")
    attributes = {kv.key: kv.value for kv in tool.attributes}
    assert attributes["gen_ai.tool.name"].string_value == "get_capital_city"
    assert attributes["gen_ai.conversation.id"].string_value == "export-live"
    assert all(s.end_time_unix_nano >= s.start_time_unix_nano > 0 for s in spans)

    document_path = reverse("dashboard:session_export", kwargs={"session_id": session.id})
    document = strict_json(b"".join(await download(client, document_path)))
    assert [e["author"] for e in document["events"]] == [
        "user",
        "capital_agent",
        "capital_agent",
        "capital_agent",
    ]
    assert len(document["spans"]) == len(rows)


async def test_daphnes_side_sends_a_big_session_part_by_part(alice: User) -> None:
    session = await sync_to_async(session_of)(alice, "export-parts")
    versions = [
        SpanVersion(
            trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
            span_id=f"{i + 1:016x}",
            name=f"step {i}",
            start_time=1_000 + i,
            end_time=2_000 + i,
            session_id=session.id,
        )
        for i in range(2_500)
    ]
    await sync_to_async(spans_store)(versions=versions)
    client = AsyncClient()
    await client.aforce_login(alice)
    path = reverse("dashboard:session_export_otlp", kwargs={"session_id": session.id})
    parts = await download(client, path)
    assert len(parts) == 1 + 3 + 1  # the opening, 1,000 spans at a time, the closing
    spans = otlp_parse(b"".join(parts)).resource_spans[0].scope_spans[0].spans
    assert [s.name for s in spans] == [f"step {i}" for i in range(2_500)]
