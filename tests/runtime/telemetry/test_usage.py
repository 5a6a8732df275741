"""Token counts on model spans: input and output as the OTel GenAI conventions count them
(cached tokens inside the input, thinking inside the output), cached and thinking tokens
apart when the model reports them — from a scripted model, from Gemini over its wire format,
and from a screen's model call."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from runtime import Agent, InMemorySessionService, LlmRequest, LlmResponse, Runner, ScriptedLlm
from runtime.guardrails import LlmScreen
from runtime.models.gemini import Gemini
from runtime.telemetry.attributes import GenAI
from runtime.telemetry.usage import usage_attributes
from runtime.testing.gemini_server import FakeGeminiServer
from tests.runtime.safety.conftest import callback_context

Usage = types.GenerateContentResponseUsageMetadata


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (None, {}),
        (Usage(), {}),
        (
            Usage(prompt_token_count=120, candidates_token_count=30),
            {GenAI.USAGE_INPUT_TOKENS: 120, GenAI.USAGE_OUTPUT_TOKENS: 30},
        ),
        (
            Usage(
                prompt_token_count=1200,
                candidates_token_count=30,
                cached_content_token_count=1000,
                thoughts_token_count=250,
            ),
            {
                GenAI.USAGE_INPUT_TOKENS: 1200,
                GenAI.USAGE_OUTPUT_TOKENS: 280,
                GenAI.USAGE_CACHE_READ_INPUT_TOKENS: 1000,
                GenAI.USAGE_REASONING_OUTPUT_TOKENS: 250,
            },
        ),
        (
            Usage(prompt_token_count=10, tool_use_prompt_token_count=5, thoughts_token_count=7),
            {
                GenAI.USAGE_INPUT_TOKENS: 15,
                GenAI.USAGE_OUTPUT_TOKENS: 7,
                GenAI.USAGE_REASONING_OUTPUT_TOKENS: 7,
            },
        ),
        (
            Usage(prompt_token_count=0, candidates_token_count=0, cached_content_token_count=0),
            {
                GenAI.USAGE_INPUT_TOKENS: 0,
                GenAI.USAGE_OUTPUT_TOKENS: 0,
                GenAI.USAGE_CACHE_READ_INPUT_TOKENS: 0,
            },
        ),
    ],
    ids=["none", "empty", "plain", "cached-and-thinking", "tool-prompt-and-thinking-only", "zeros"],
)
def test_usage_attributes(usage: Usage | None, expected: dict[str, int]) -> None:
    assert usage_attributes(usage) == expected


def test_the_attribute_names_are_the_conventions() -> None:
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as semconv

    assert GenAI.USAGE_CACHE_READ_INPUT_TOKENS == semconv.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS
    assert GenAI.USAGE_REASONING_OUTPUT_TOKENS == semconv.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS


async def _run(model: Any) -> None:
    service = InMemorySessionService()
    session = await service.acreate_session(app_name="usage", user_id="u1")
    runner = Runner(agent=Agent(name="a", model=model), app_name="usage", session_service=service)
    message = types.Content(role="user", parts=[types.Part(text="hello")])
    async for _ in runner.run_async(user_id="u1", session_id=session.id, new_message=message):
        pass


def _model_span(spans: InMemorySpanExporter) -> dict[str, Any]:
    (found,) = [s for s in spans.get_finished_spans() if s.name.startswith("generate_content")]
    return dict(found.attributes or {})


async def test_a_model_span_records_cached_and_thinking_tokens(
    spans: InMemorySpanExporter,
) -> None:
    answer = LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text="hi")]),
        finish_reason=types.FinishReason.STOP,
        usage_metadata=Usage(
            prompt_token_count=900,
            candidates_token_count=12,
            cached_content_token_count=800,
            thoughts_token_count=40,
        ),
    )
    await _run(ScriptedLlm(responses=[answer]))
    attributes = _model_span(spans)
    assert attributes[GenAI.USAGE_INPUT_TOKENS] == 900
    assert attributes[GenAI.USAGE_OUTPUT_TOKENS] == 52
    assert attributes[GenAI.USAGE_CACHE_READ_INPUT_TOKENS] == 800
    assert attributes[GenAI.USAGE_REASONING_OUTPUT_TOKENS] == 40


async def test_a_model_that_reports_neither_gets_neither(spans: InMemorySpanExporter) -> None:
    answer = LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text="hi")]),
        usage_metadata=Usage(prompt_token_count=9, candidates_token_count=2),
    )
    await _run(ScriptedLlm(responses=[answer]))
    attributes = _model_span(spans)
    assert (attributes[GenAI.USAGE_INPUT_TOKENS], attributes[GenAI.USAGE_OUTPUT_TOKENS]) == (9, 2)
    assert GenAI.USAGE_CACHE_READ_INPUT_TOKENS not in attributes
    assert GenAI.USAGE_REASONING_OUTPUT_TOKENS not in attributes


async def test_gemini_usage_over_the_wire(
    spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with FakeGeminiServer() as server:
        server.script(
            {
                "candidates": [
                    {
                        "content": {"role": "model", "parts": [{"text": "Paris."}]},
                        "finishReason": "STOP",
                        "index": 0,
                    }
                ],
                "usageMetadata": {
                    "promptTokenCount": 4000,
                    "candidatesTokenCount": 3,
                    "cachedContentTokenCount": 3500,
                    "thoughtsTokenCount": 120,
                    "totalTokenCount": 4123,
                },
                "modelVersion": "gemini-2.5-flash-001",
            }
        )
        llm = Gemini(model="gemini-2.5-flash", api_key="k", base_url=server.base_url)
        try:
            await _run(llm)
        finally:
            await llm.aclose()
    attributes = _model_span(spans)
    assert attributes[GenAI.USAGE_INPUT_TOKENS] == 4000
    assert attributes[GenAI.USAGE_OUTPUT_TOKENS] == 123
    assert attributes[GenAI.USAGE_CACHE_READ_INPUT_TOKENS] == 3500
    assert attributes[GenAI.USAGE_REASONING_OUTPUT_TOKENS] == 120
    assert attributes[GenAI.RESPONSE_MODEL] == "gemini-2.5-flash-001"


async def test_a_screens_model_call_records_its_usage(spans: InMemorySpanExporter) -> None:
    verdict = LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text="safe")]),
        usage_metadata=Usage(
            prompt_token_count=60, candidates_token_count=1, thoughts_token_count=20
        ),
    )
    screen = LlmScreen(ScriptedLlm(responses=[verdict]))
    request = types.Content(role="user", parts=[types.Part(text="my order?")])
    await screen.before_model(
        callback_context=callback_context(), llm_request=LlmRequest(contents=[request])
    )
    attributes = _model_span(spans)
    assert attributes[GenAI.USAGE_INPUT_TOKENS] == 60
    assert attributes[GenAI.USAGE_OUTPUT_TOKENS] == 21
    assert attributes[GenAI.USAGE_REASONING_OUTPUT_TOKENS] == 20
