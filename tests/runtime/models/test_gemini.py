"""Gemini through the real google-genai client against a local server speaking the wire format."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from google.genai import errors as genai_errors
from google.genai import types
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from runtime.errors import ModelCallError
from runtime.models.gemini import Gemini
from runtime.models.llm_request import LlmRequest
from runtime.models.llm_response import LlmResponse
from runtime.testing.gemini_server import FakeGeminiServer

_exporter = InMemorySpanExporter()
_provider = TracerProvider()
_provider.add_span_processor(SimpleSpanProcessor(_exporter))
_tracer = _provider.get_tracer("test_gemini")


@pytest.fixture
def server() -> Iterator[FakeGeminiServer]:
    with FakeGeminiServer() as s:
        yield s


@pytest.fixture(autouse=True)
def _no_env_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    _exporter.clear()


_open: list[Gemini] = []


@pytest.fixture(autouse=True)
async def _close_clients() -> AsyncIterator[None]:
    yield
    while _open:
        await _open.pop().aclose()


def make_llm(server: FakeGeminiServer, **kw: Any) -> Gemini:
    opts: dict[str, Any] = {
        "api_key": "test-key",
        "base_url": server.base_url,
        "initial_backoff_s": 0.001,
        "max_backoff_s": 0.01,
    }
    opts.update(kw)
    llm = Gemini(**opts)
    _open.append(llm)
    return llm


def user_request(text: str = "hello model", **config: Any) -> LlmRequest:
    return LlmRequest(
        contents=[types.Content(role="user", parts=[types.Part(text=text)])],
        config=types.GenerateContentConfig(**config),
    )


async def call(llm: Gemini, request: LlmRequest, stream: bool = False) -> list[LlmResponse]:
    with _tracer.start_as_current_span("call_llm"):
        return [r async for r in llm.generate_content_async(request, stream=stream)]


def retry_events() -> list[dict[str, Any]]:
    return [
        dict(e.attributes or {})
        for span in _exporter.get_finished_spans()
        for e in span.events
        if e.name == "gen_ai.retry"
    ]


# -- the happy paths -------------------------------------------------------------------------


async def test_plain_call_returns_text_and_usage(server: FakeGeminiServer) -> None:
    server.script("Paris is sunny.")
    [response] = await call(make_llm(server), user_request("weather in Paris please"))

    assert response.text == "Paris is sunny."
    assert response.partial is None
    assert response.finish_reason == types.FinishReason.STOP
    assert response.error_code is None
    usage = response.usage_metadata
    assert usage is not None
    assert usage.prompt_token_count == 4  # the fake counts words
    assert usage.candidates_token_count == 3
    assert usage.total_token_count == 7
    [sent] = server.requests
    assert sent.path == "/v1/models/gemini-2.5-flash:generateContent"
    assert sent.headers["x-goog-api-key"] == "test-key"
    assert sent.body["contents"] == [
        {"role": "user", "parts": [{"text": "weather in Paris please"}]}
    ]
    assert retry_events() == []


async def test_request_model_overrides_the_instance_model(server: FakeGeminiServer) -> None:
    server.script("ok")
    request = user_request()
    request.model = "gemini-2.5-pro"
    await call(make_llm(server, model="gemini-2.5-flash"), request)
    assert server.requests[0].model == "gemini-2.5-pro"


async def test_system_instruction_and_tools_reach_the_server(server: FakeGeminiServer) -> None:
    server.script("ok")
    json_schema_tool = types.FunctionDeclaration(
        name="get_weather",
        description="Weather for a city.",
        parameters_json_schema={
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    )
    schema_tool = types.FunctionDeclaration(
        name="get_time",
        description="Local time in a city.",
        parameters=types.Schema(
            type=types.Type.OBJECT,
            properties={"city": types.Schema(type=types.Type.STRING)},
            required=["city"],
        ),
    )
    request = user_request(
        system_instruction="You are a weather bot.",
        tools=[types.Tool(function_declarations=[json_schema_tool, schema_tool])],
    )
    request.append_instructions(["Answer briefly."])
    await call(make_llm(server), request)

    [sent] = server.requests
    assert sent.system_text == "You are a weather bot.\n\nAnswer briefly."
    by_name = {d["name"]: d for d in sent.function_declarations}
    assert set(by_name) == {"get_weather", "get_time"}
    assert by_name["get_weather"]["description"] == "Weather for a city."
    # google-genai sends the JSON-schema form under its snake_case name.
    assert by_name["get_weather"]["parameters_json_schema"]["required"] == ["city"]
    assert by_name["get_time"]["parameters"]["type"] == "OBJECT"
    assert by_name["get_time"]["parameters"]["properties"]["city"]["type"] == "STRING"


async def test_function_call_reply_becomes_a_function_call_part(server: FakeGeminiServer) -> None:
    server.script({"name": "get_weather", "args": {"city": "Paris", "days": 2}})
    [response] = await call(make_llm(server), user_request())

    assert response.content is not None and response.content.parts
    [part] = response.content.parts
    assert part.function_call is not None
    assert part.function_call.name == "get_weather"
    assert part.function_call.args == {"city": "Paris", "days": 2}
    assert response.text == ""


async def test_streaming_yields_partials_then_one_aggregate(server: FakeGeminiServer) -> None:
    server.script(["The weather ", "in Paris ", "is sunny."])
    responses = await call(make_llm(server), user_request(), stream=True)

    *partials, final = responses
    assert [r.text for r in partials] == ["The weather ", "in Paris ", "is sunny."]
    assert all(r.partial is True for r in partials)
    assert final.partial is not True
    assert final.text == "The weather in Paris is sunny."
    assert final.content is not None and len(final.content.parts or []) == 1
    assert final.finish_reason == types.FinishReason.STOP
    assert final.usage_metadata is not None
    assert final.usage_metadata.candidates_token_count == 6  # six words, from the last chunk
    assert final.usage_metadata.total_token_count == 8
    [sent] = server.requests
    assert sent.path.endswith(":streamGenerateContent")
    assert sent.query == {"alt": "sse"}


async def test_streamed_function_call_only_in_the_final_response(server: FakeGeminiServer) -> None:
    server.script(["Let me check. ", {"name": "get_weather", "args": {"city": "Oslo"}}])
    *partials, final = await call(make_llm(server), user_request(), stream=True)

    assert [r.text for r in partials] == ["Let me check. "]
    assert final.content is not None
    text_part, call_part = final.content.parts or []
    assert text_part.text == "Let me check. "
    assert call_part.function_call is not None
    assert call_part.function_call.name == "get_weather"
    assert call_part.function_call.args == {"city": "Oslo"}


@pytest.mark.parametrize(
    ("api_version", "expected"), [(None, "v1"), ("v1", "v1"), ("v1beta", "v1beta")]
)
@pytest.mark.parametrize("stream", [False, True])
async def test_api_versions(
    server: FakeGeminiServer, api_version: str | None, expected: str, stream: bool
) -> None:
    server.script("hi")
    responses = await call(make_llm(server, api_version=api_version), user_request(), stream)
    assert responses[-1].text == "hi"
    assert server.requests[0].api_version == expected


async def test_base_url_and_key_from_the_environment(
    server: FakeGeminiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "env-key")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.base_url)
    server.script("from env")
    llm = Gemini()
    _open.append(llm)
    [response] = await call(llm, user_request())
    assert response.text == "from env"
    assert server.requests[0].headers["x-goog-api-key"] == "env-key"


async def test_missing_api_key_is_a_clear_error_at_call_time() -> None:
    llm = Gemini(base_url="http://127.0.0.1:9")  # constructing it is fine
    with pytest.raises(ModelCallError) as info:
        await call(llm, user_request())
    assert "GOOGLE_API_KEY" in str(info.value)
    assert "GEMINI_API_KEY" in str(info.value)


# -- retries ---------------------------------------------------------------------------------


async def test_429_with_retry_after_then_success(server: FakeGeminiServer) -> None:
    # Our own backoff would wait up to 2 s; Retry-After: 0 says retry at once.
    server.fail(status=429, retry_after=0, times=2)
    server.script("finally")
    llm = make_llm(server, initial_backoff_s=2, max_backoff_s=2)
    [response] = await call(llm, user_request())

    assert response.text == "finally"
    assert len(server.requests) == 3
    events = retry_events()
    assert [(e["attempt"], e["status"]) for e in events] == [(1, 429), (2, 429)]
    assert [e["delay_s"] for e in events] == [0.0, 0.0]


async def test_retry_after_seconds_are_the_delay(server: FakeGeminiServer) -> None:
    server.fail(status=429, retry_after=0.05)
    server.script("ok")
    await call(make_llm(server, initial_backoff_s=2, max_backoff_s=2), user_request())
    assert [e["delay_s"] for e in retry_events()] == [0.05]


async def test_retry_info_in_the_error_body_is_honoured(server: FakeGeminiServer) -> None:
    server.fail(status=429, retry_delay_s=0)
    server.script("ok")
    await call(make_llm(server, initial_backoff_s=2, max_backoff_s=2), user_request())
    assert [e["delay_s"] for e in retry_events()] == [0.0]


async def test_503_twice_then_success(server: FakeGeminiServer) -> None:
    server.fail(status=503, times=2)
    server.script("recovered")
    [response] = await call(make_llm(server), user_request())

    assert response.text == "recovered"
    assert len(server.requests) == 3
    events = retry_events()
    assert [e["status"] for e in events] == [503, 503]
    assert all(0 <= e["delay_s"] <= 0.01 for e in events)  # capped by max_backoff_s


async def test_503_forever_gives_up_after_max_attempts(server: FakeGeminiServer) -> None:
    server.fail(status=503, times=10)
    with pytest.raises(ModelCallError) as info:
        await call(make_llm(server, max_attempts=3), user_request())

    error = info.value
    assert error.status == 503
    assert error.attempts == 3
    assert "503" in str(error) and "3 attempts" in str(error)
    assert isinstance(error.__cause__, genai_errors.ServerError)
    assert len(server.requests) == 3
    assert len(retry_events()) == 2


async def test_400_fails_at_once(server: FakeGeminiServer) -> None:
    server.fail(status=400, message="Invalid JSON payload received.")
    server.script("never sent")
    with pytest.raises(ModelCallError) as info:
        await call(make_llm(server), user_request())

    assert info.value.status == 400
    assert info.value.attempts == 1
    assert "Invalid JSON payload received." in str(info.value)
    assert isinstance(info.value.__cause__, genai_errors.ClientError)
    assert len(server.requests) == 1
    assert retry_events() == []


async def test_latency_beyond_the_timeout_is_retried_then_fails(server: FakeGeminiServer) -> None:
    server.latency_s = 2
    server.default_reply = "too late"
    with pytest.raises(ModelCallError) as info:
        await call(make_llm(server, timeout_s=0.2, max_attempts=2), user_request())

    assert info.value.status is None
    assert info.value.attempts == 2
    assert "Timeout" in type(info.value.__cause__).__name__
    assert "0.2s" in str(info.value)
    assert len(server.requests) == 2
    assert [e["attempt"] for e in retry_events()] == [1]


async def test_a_stalled_request_is_retried(server: FakeGeminiServer) -> None:
    server.stall(2)
    server.script("second try")
    [response] = await call(make_llm(server, timeout_s=0.2), user_request())
    assert response.text == "second try"
    assert len(server.requests) == 2


async def test_stream_is_retried_before_anything_was_yielded(server: FakeGeminiServer) -> None:
    server.fail(status=503)
    server.fail(status=429, retry_after=0)
    server.script(["one ", "two"])
    responses = await call(make_llm(server), user_request(), stream=True)

    assert [r.text for r in responses] == ["one ", "two", "one two"]
    assert len(server.requests) == 3
    assert [e["status"] for e in retry_events()] == [503, 429]


async def test_stream_failing_after_text_was_yielded_is_not_retried(
    server: FakeGeminiServer,
) -> None:
    error = {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}
    server.script(["partial text ", error])
    server.script("never sent")
    seen: list[LlmResponse] = []
    with pytest.raises(ModelCallError) as info, _tracer.start_as_current_span("call_llm"):
        async for r in make_llm(server).generate_content_async(user_request(), stream=True):
            seen.append(r)

    assert [r.text for r in seen] == ["partial text "]
    assert info.value.status == 503
    assert info.value.attempts == 1
    assert "mid-stream" in str(info.value)
    assert len(server.requests) == 1


async def test_stream_400_fails_at_once(server: FakeGeminiServer) -> None:
    server.fail(status=400)
    with pytest.raises(ModelCallError) as info:
        await call(make_llm(server), user_request(), stream=True)
    assert info.value.status == 400
    assert len(server.requests) == 1


async def test_client_is_reused_across_calls(server: FakeGeminiServer) -> None:
    server.script("a", "b")
    llm = make_llm(server)
    await call(llm, user_request())
    client = llm.api_client
    await call(llm, user_request())
    assert llm.api_client is client
    assert len(server.requests) == 2


def test_supported_models() -> None:
    import re

    patterns = Gemini.supported_models()
    assert any(re.fullmatch(p, "gemini-2.5-flash") for p in patterns)
    assert not any(re.fullmatch(p, "gpt-4o") for p in patterns)
    assert Gemini.provider == "gemini"


@pytest.mark.parametrize("stream", [False, True])
async def test_blocked_prompt_becomes_an_error_response(
    server: FakeGeminiServer, stream: bool
) -> None:
    server.script(
        {
            "promptFeedback": {"blockReason": "SAFETY"},
            "usageMetadata": {"promptTokenCount": 2, "totalTokenCount": 2},
        }
    )
    responses = await call(make_llm(server), user_request(), stream=stream)
    assert len(responses) == 1
    assert responses[0].error_code == "SAFETY"
    assert responses[0].content is None
    assert responses[0].usage_metadata is not None
    assert responses[0].usage_metadata.prompt_token_count == 2
