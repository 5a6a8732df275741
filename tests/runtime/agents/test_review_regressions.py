"""Behaviours that once differed from ADK (or leaked), pinned down."""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest
from google.genai import types
from opentelemetry import trace
from pydantic import BaseModel

from runtime import (
    Agent,
    BaseLlm,
    InMemorySessionService,
    LlmResponse,
    ParallelAgent,
    Runner,
    ScriptedLlm,
    SequentialAgent,
)


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def make(agent: Agent | ParallelAgent | SequentialAgent) -> tuple[Runner, str]:
    service = InMemorySessionService()
    session = service.create_session(app_name="app", user_id="u")
    return Runner(agent=agent, app_name="app", session_service=service), session.id


async def test_parallel_branch_sees_its_own_tool_call_on_its_next_model_call() -> None:
    def lookup(key: str) -> str:
        """Look a key up."""
        return key.upper()

    llms = {
        name: ScriptedLlm(responses=[types.FunctionCall(name="lookup", args={"key": name}), "ok"])
        for name in ("a", "b")
    }
    fan = ParallelAgent(
        name="fan",
        sub_agents=[Agent(name=n, model=llm, tools=[lookup]) for n, llm in llms.items()],
    )
    runner, sid = make(fan)
    async for _ in runner.run_async(user_id="u", session_id=sid, new_message=user("go")):
        await asyncio.sleep(0)  # a slow consumer: branches must still wait for it
    for name, llm in llms.items():
        second = llm.requests[1].contents
        parts = [p for c in second for p in c.parts or []]
        assert any(p.function_call and p.function_call.args == {"key": name} for p in parts)
        assert any(
            p.function_response and p.function_response.response == {"result": name.upper()}
            for p in parts
        )


async def test_span_context_does_not_leak_into_the_consumer(spans) -> None:  # type: ignore[no-untyped-def]
    tracer = trace.get_tracer("test")
    runner, sid = make(Agent(name="a", model=ScriptedLlm(responses=["one two"]), callbacks=[]))
    from runtime import RunConfig, StreamingMode

    with tracer.start_as_current_span("consumer") as outer:
        seen = []
        async for _ in runner.run_async(
            user_id="u",
            session_id=sid,
            new_message=user("x"),
            run_config=RunConfig(streaming_mode=StreamingMode.SSE),
        ):
            seen.append(trace.get_current_span())
        assert seen and all(s is outer for s in seen)
    names = {s.name: s for s in spans.get_finished_spans()}
    assert names["invocation app"].parent.span_id == outer.get_span_context().span_id


async def test_stopping_early_ends_spans_and_restores_context(spans, caplog) -> None:  # type: ignore[no-untyped-def]
    runner, sid = make(Agent(name="a", model=ScriptedLlm(responses=["x"]), callbacks=[]))
    before = trace.get_current_span()
    with caplog.at_level(logging.ERROR):
        events = runner.run_async(user_id="u", session_id=sid, new_message=user("x"))
        async for _ in events:
            break
        await events.aclose()
    assert trace.get_current_span() is before
    assert "Failed to detach context" not in caplog.text
    assert {s.name for s in spans.get_finished_spans()} >= {"invocation app", "invoke_agent a"}


def test_closing_a_sync_run_early_cancels_the_agent() -> None:
    cancelled = threading.Event()

    class Slow(BaseLlm):
        model: str = "slow"

        async def generate_content_async(self, llm_request, stream=False):  # type: ignore[no-untyped-def]
            yield LlmResponse(
                content=types.Content(role="model", parts=[types.Part(text="chunk")]),
                partial=True,
            )
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                cancelled.set()
                raise
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="x")]))

    from runtime import RunConfig, StreamingMode

    runner, sid = make(Agent(name="a", model=Slow(), callbacks=[]))
    events = runner.run(
        user_id="u",
        session_id=sid,
        new_message=user("x"),
        run_config=RunConfig(streaming_mode=StreamingMode.SSE),
    )
    first = next(events)
    assert first.partial
    events.close()
    assert cancelled.wait(timeout=10)


async def test_include_contents_none_starts_at_the_previous_agents_reply() -> None:
    a = Agent(name="a", model=ScriptedLlm(responses=["from a"]))
    b = Agent(name="b", model=ScriptedLlm(responses=["from b"]))
    c_llm = ScriptedLlm(responses=["from c"])
    c = Agent(name="c", model=c_llm, include_contents="none")
    runner, sid = make(SequentialAgent(name="p", sub_agents=[a, b, c]))
    async for _ in runner.run_async(user_id="u", session_id=sid, new_message=user("hi")):
        pass
    texts = [p.text for content in c_llm.requests[0].contents for p in content.parts or []]
    assert texts == ["For context:", "[b] said: from b"]


class Answer(BaseModel):
    city: str


async def test_output_schema_blank_answer_stores_nothing_and_bad_json_names_the_agent() -> None:
    ok = Agent(
        name="a", model=ScriptedLlm(responses=["  "]), output_schema=Answer, output_key="ans"
    )
    runner, sid = make(ok)
    events = [e async for e in runner.run_async(user_id="u", session_id=sid, new_message=user("x"))]
    assert events[-1].actions.state_delta == {}
    bad = Agent(
        name="b", model=ScriptedLlm(responses=["not json"]), output_schema=Answer, output_key="ans"
    )
    runner, sid = make(bad)
    with pytest.raises(ValueError, match=r"agent 'b'.*Answer.*output_key 'ans'"):
        async for _ in runner.run_async(user_id="u", session_id=sid, new_message=user("x")):
            pass


async def test_none_state_value_renders_empty() -> None:
    llm = ScriptedLlm(responses=["ok"])
    agent = Agent(name="a", model=llm, instruction="Name: {n}.")
    service = InMemorySessionService()
    session = service.create_session(app_name="app", user_id="u", state={"n": None})
    runner = Runner(agent=agent, app_name="app", session_service=service)
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=user("x")):
        pass
    assert str(llm.requests[0].config.system_instruction).startswith("Name: .")


async def test_bad_arguments_are_clear_type_errors() -> None:
    runner, sid = make(Agent(name="a", model=ScriptedLlm(responses=["x"])))
    with pytest.raises(TypeError, match=r"new_message must be a google.genai types.Content"):
        async for _ in runner.run_async(user_id="u", session_id=sid, new_message="hi"):  # type: ignore[arg-type]
            pass
    with pytest.raises(TypeError, match="sub_agents of 'p' must be agents"):
        Agent(name="p", model="offline", sub_agents=[print])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="model of 'm' must be a model name or a BaseLlm"):
        Agent(name="m", model=123)  # type: ignore[arg-type]
