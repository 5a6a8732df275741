"""What a model span and an overriding callback's span record of the content they handled:
the tools declared to the model (``gen_ai.tool.definitions``), what a callback returned
(``agentdash.callback.returned``) and what that replaced (``agentdash.callback.replaced``) —
the details pane draws its conversation and callback views from them. Nothing is recorded
when the run does not capture content."""

from __future__ import annotations

import json
from typing import Any

from google.genai import types
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from runtime import (
    Agent,
    InMemorySessionService,
    LlmResponse,
    RunConfig,
    Runner,
    ScriptedLlm,
)
from runtime.telemetry.payloads import MAX_ATTRIBUTE_CHARS, TRUNCATION_MARK, tool_definitions


def get_weather(city: str, days: int = 1) -> dict[str, Any]:
    """The weather in a city.

    Args:
      city: the city's name.
    """
    return {"city": city, "sky": "sunny"}


def _call(name: str, **args: Any) -> LlmResponse:
    call = types.FunctionCall(id=f"call-{name}", name=name, args=args)
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))


def _answer(text: str) -> LlmResponse:
    return LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text=text)]),
        finish_reason=types.FinishReason.STOP,
    )


def louder(callback_context: Any, llm_response: LlmResponse) -> LlmResponse | None:
    """after_model: the final answer in capitals."""
    if not llm_response.content or any(p.function_call for p in llm_response.content.parts or []):
        return None
    return _answer((llm_response.content.parts or [types.Part(text="")])[0].text.upper())


def canned(callback_context: Any, llm_request: Any) -> LlmResponse:
    """before_model: never calls the model."""
    return _answer("from the cache")


def bigger(tool: Any, args: Any, tool_context: Any, tool_response: dict) -> dict:
    """after_tool: a new result, and a huge one."""
    return {"sky": "cloudy", "padding": "x" * (MAX_ATTRIBUTE_CHARS * 2)}


def rescue(tool: Any, args: Any, tool_context: Any, error: Exception) -> dict:
    """on_tool_error: a result instead of the error."""
    return {"fallback": True}


def broken(city: str) -> dict[str, Any]:
    """Always fails."""
    raise ValueError(f"no weather for {city}")


async def _run(agent: Agent, *, capture: bool = True) -> None:
    service = InMemorySessionService()
    session = await service.acreate_session(app_name="content", user_id="u1")
    runner = Runner(agent=agent, app_name="content", session_service=service)
    message = types.Content(role="user", parts=[types.Part(text="Weather in Paris?")])
    async for _ in runner.run_async(
        user_id="u1",
        session_id=session.id,
        new_message=message,
        run_config=RunConfig(capture_content=capture),
    ):
        pass


def _spans(spans: InMemorySpanExporter, prefix: str) -> list[dict[str, Any]]:
    return [
        dict(s.attributes or {}) for s in spans.get_finished_spans() if s.name.startswith(prefix)
    ]


async def test_a_model_span_records_the_tools_declared_to_the_model(
    spans: InMemorySpanExporter,
) -> None:
    model = ScriptedLlm(responses=[_call("get_weather", city="Paris"), _answer("Sunny.")])
    await _run(Agent(name="weather", model=model, tools=[get_weather]))
    first = _spans(spans, "generate_content")[0]
    definitions = json.loads(first["gen_ai.tool.definitions"])
    assert definitions == [
        {
            "type": "function",
            "name": "get_weather",
            "description": "The weather in a city.\n\nArgs:\n  city: the city's name.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer", "default": 1},
                },
                "required": ["city"],
            },
        }
    ]


async def test_an_agent_without_tools_records_no_definitions(
    spans: InMemorySpanExporter,
) -> None:
    await _run(Agent(name="plain", model=ScriptedLlm(responses=[_answer("Hi.")])))
    (model,) = _spans(spans, "generate_content")
    assert "gen_ai.tool.definitions" not in model
    assert "gen_ai.input.messages" in model


def test_built_in_tools_are_named_by_their_kind() -> None:
    tools = [types.Tool(google_search=types.GoogleSearch()), "not a tool"]
    assert tool_definitions(tools) == [{"type": "google_search", "name": "google_search"}]


async def test_an_after_model_override_records_what_it_returned_and_replaced(
    spans: InMemorySpanExporter,
) -> None:
    model = ScriptedLlm(responses=[_answer("sunny.")])
    await _run(Agent(name="loud", model=model, after_model_callback=louder))
    (callback,) = _spans(spans, "callback louder")
    assert callback["agentdash.callback.outcome"] == "overridden"
    returned = json.loads(callback["agentdash.callback.returned"])
    replaced = json.loads(callback["agentdash.callback.replaced"])
    assert returned == [{"role": "assistant", "parts": [{"type": "text", "content": "SUNNY."}]}]
    assert replaced == [{"role": "assistant", "parts": [{"type": "text", "content": "sunny."}]}]


async def test_a_before_model_override_records_what_it_returned_and_nothing_replaced(
    spans: InMemorySpanExporter,
) -> None:
    await _run(Agent(name="cached", model=ScriptedLlm(responses=[]), before_model_callback=canned))
    (callback,) = _spans(spans, "callback canned")
    assert json.loads(callback["agentdash.callback.returned"])[0]["parts"] == [
        {"type": "text", "content": "from the cache"}
    ]
    assert "agentdash.callback.replaced" not in callback


async def test_tool_overrides_record_results_and_errors_within_the_size_cap(
    spans: InMemorySpanExporter,
) -> None:
    model = ScriptedLlm(
        responses=[_call("get_weather", city="Paris"), _call("broken", city="Oslo"), _answer(".")]
    )
    agent = Agent(
        name="tools",
        model=model,
        tools=[get_weather, broken],
        after_tool_callback=bigger,
        on_tool_error_callback=rescue,
    )
    await _run(agent)
    after = _spans(spans, "callback bigger")[0]
    assert json.loads(after["agentdash.callback.replaced"]) == {"city": "Paris", "sky": "sunny"}
    returned = after["agentdash.callback.returned"]
    assert len(returned) == MAX_ATTRIBUTE_CHARS and returned.endswith(TRUNCATION_MARK)
    (error,) = _spans(spans, "callback rescue")
    assert json.loads(error["agentdash.callback.returned"]) == {"fallback": True}
    assert json.loads(error["agentdash.callback.replaced"]) == "ValueError: no weather for Oslo"


async def test_nothing_is_recorded_without_content_capture(spans: InMemorySpanExporter) -> None:
    model = ScriptedLlm(responses=[_call("get_weather", city="Paris"), _answer("sunny.")])
    agent = Agent(name="quiet", model=model, tools=[get_weather], after_model_callback=louder)
    await _run(agent, capture=False)
    for attributes in _spans(spans, ""):
        assert not {
            "gen_ai.tool.definitions",
            "agentdash.callback.returned",
            "agentdash.callback.replaced",
        } & set(attributes), attributes
    outcomes = [c["agentdash.callback.outcome"] for c in _spans(spans, "callback louder")]
    assert outcomes == ["passed", "overridden"]  # the tool call passes, the answer does not
