"""Hostile strings from an agent — NUL, lone surrogates, huge and deeply nested values — in a
span attribute (its key too), a tool's arguments and result, model text and a state delta:
everything is stored (the bad characters replaced by U+FFFD and the row marked), the session's
client sees it live, and another session keeps streaming meanwhile. Runs on SQLite and, in
``make test``'s second pass, on PostgreSQL, which refuses NUL and lone surrogates outright."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from google.genai import types
from opentelemetry import trace

from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.agent_sessions.session_service import DjangoSessionService
from agentdash.changes.selectors import session_last_seq
from agentdash.core.hygiene import REPLACEMENT, TOO_DEEP
from agentdash.live.pipeline import LivePipeline
from agentdash.spans.models import Span
from runtime import LlmAgent, Runner, ScriptedLlm, ToolContext
from runtime.telemetry.attributes import AgentDash
from tests.agentdash.live.conftest import Connect, changes_until, hello
from tests.agentdash.stored import session_of

pytestmark = pytest.mark.django_db(transaction=True)

NUL, SURROGATE, LOW = "\x00", "\ud800", "\udfff"
HOSTILE = f"a{NUL}b{SURROGATE}c{LOW}"
HUGE = "h" * 300_000


def deep(levels: int) -> Any:
    value: Any = "bottom"
    for _ in range(levels):
        value = {"k": [value]}
    return value


def hostile_agent(name: str) -> LlmAgent:
    def mark_span(callback_context: Any, llm_request: Any) -> None:
        span = trace.get_current_span()
        span.set_attribute("test.note", HOSTILE)
        span.set_attribute(f"test.key{SURROGATE}", "value")
        return None

    def echo(text: str, nested: dict, tool_context: ToolContext) -> dict:
        """Echo the text back."""
        tool_context.state[f"note{SURROGATE}"] = text
        tool_context.state["deep"] = deep(200)
        return {"echo": text, "nested": nested, "huge": HUGE, f"key{NUL}": deep(3_000)}

    return LlmAgent(
        name=name,
        model=ScriptedLlm(
            responses=[
                types.FunctionCall(name="echo", args={"text": HOSTILE, "nested": deep(500)}),
                f"The answer is **{HOSTILE}**.",
            ]
        ),
        tools=[echo],
        before_model_callback=mark_span,
    )


def plain_agent(name: str) -> LlmAgent:
    return LlmAgent(name=name, model=ScriptedLlm(responses=["All is well."]))


async def drive(agent: LlmAgent, session: AgentSession, text: str) -> None:
    runner = Runner(agent=agent, app_name="app", session_service=DjangoSessionService())
    message = types.Content(role="user", parts=[types.Part(text=text)])
    async for _ in runner.run_async(
        user_id=session.user_id, session_id=session.id, new_message=message
    ):
        pass


def stored_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


async def test_hostile_agent_output_is_stored_marked_and_streamed_beside_other_sessions(
    connect: Connect, live: LivePipeline, alice: User
) -> None:
    bad = await sync_to_async(session_of)(alice, "s-hostile")
    good = await sync_to_async(session_of)(alice, "s-good")
    bad_socket = await connect(alice, bad.id)
    good_socket = await connect(alice, good.id)
    assert await hello(bad_socket) == ([], 0)
    assert await hello(good_socket) == ([], 0)

    # At once: the flushes carry both sessions' spans together.
    await asyncio.gather(
        drive(hostile_agent("hostile"), bad, f"Start {HOSTILE}"),
        drive(plain_agent("plain"), good, "Hello"),
    )
    await live.stop()  # flushes and publishes everything that waits

    # The other session streamed all of its changes, in order.
    last_good = await sync_to_async(session_last_seq)(session_id=good.id)
    good_items, _ = await changes_until(
        good_socket, lambda items: bool(items) and items[-1]["seq"] >= last_good
    )
    assert [i["seq"] for i in good_items] == list(range(1, last_good + 1))
    assert any(i["kind"] == "event" and "All is well" in i["data"]["html"] for i in good_items)

    # The hostile session streamed too: every change, the bad characters replaced.
    last_bad = await sync_to_async(session_last_seq)(session_id=bad.id)
    bad_items, _ = await changes_until(
        bad_socket, lambda items: bool(items) and items[-1]["seq"] >= last_bad
    )
    assert [i["seq"] for i in bad_items] == list(range(1, last_bad + 1))
    shown = stored_text([i["data"] for i in bad_items])
    assert NUL not in shown and SURROGATE not in shown and LOW not in shown
    final = [i["data"] for i in bad_items if i["kind"] == "event" and i["data"]["final"]]
    assert final and f"a{REPLACEMENT}b{REPLACEMENT}c{REPLACEMENT}" in final[-1]["html"]

    # Stored: every span ended, the ones that carried bad characters marked with how many.
    spans = [s async for s in Span.objects.filter(session_id=bad.id)]
    assert spans and all(s.end_time is not None for s in spans)
    marked = [s for s in spans if s.attributes.get(AgentDash.STORAGE_REPLACED)]
    assert any("test.note" in s.attributes for s in marked)
    noted = next(s for s in spans if "test.note" in s.attributes)
    assert noted.attributes["test.note"] == f"a{REPLACEMENT}b{REPLACEMENT}c{REPLACEMENT}"
    assert f"test.key{REPLACEMENT}" in noted.attributes

    # Events: stored whole, marked; the deep tool result cut at the storage depth.
    events = [e async for e in SessionEvent.objects.filter(session_id=bad.id).order_by("seq")]
    assert [e.author for e in events] == ["user", "hostile", "hostile", "hostile"]
    for event in events:
        text = stored_text(event.data)
        assert NUL not in text and SURROGATE not in text
        assert event.data.get("custom_metadata", {}).get(AgentDash.STORAGE_REPLACED, 0) > 0
    response = events[2].data["content"]["parts"][0]["function_response"]["response"]
    assert response["echo"] == f"a{REPLACEMENT}b{REPLACEMENT}c{REPLACEMENT}"
    assert response["huge"] == HUGE
    assert TOO_DEEP in stored_text(response[f"key{REPLACEMENT}"])

    # State: the key and the value made storable.
    stored = await AgentSession.objects.aget(pk=bad.id)
    assert stored.state[f"note{REPLACEMENT}"] == f"a{REPLACEMENT}b{REPLACEMENT}c{REPLACEMENT}"
    assert NUL not in stored_text(stored.state) and SURROGATE not in stored_text(stored.state)
