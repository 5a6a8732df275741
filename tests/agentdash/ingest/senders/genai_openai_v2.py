"""An OpenAI app instrumented by the OpenTelemetry GenAI instrumentation
(``opentelemetry-instrumentation-openai-v2``), its agent and tool spans made by hand as the
GenAI conventions name them (``invoke_agent``, ``execute_tool``). Which way message content is
recorded is the instrumentation's: JSON attributes on the span in its latest releases
(``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY`` with
``OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental``), per-message span events in
its first (2.0b0, ``...CAPTURE_MESSAGE_CONTENT=true``)."""

from __future__ import annotations

import json
import sys

from _app import finish, provider

tracer_provider = provider("genai-weather-app", service__version="1.0.0")

import openai  # noqa: E402
from fake_openai import MODEL, QUESTION, SYSTEM, TOOLS, serve  # noqa: E402
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor  # noqa: E402

OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
tracer = tracer_provider.get_tracer("weather_app", "1.0.0")
client = openai.OpenAI(base_url=serve(), api_key="sk-fake")
CONVERSATION = {"gen_ai.conversation.id": "genai-session-1"}

with tracer.start_as_current_span(
    "invoke_agent weather_agent",
    attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather_agent",
                **CONVERSATION},
):  # fmt: skip
    messages: list[dict[str, object]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": QUESTION},
    ]
    first = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
    call = first.choices[0].message.tool_calls[0]
    with tracer.start_as_current_span(
        "execute_tool get_weather",
        attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                    "gen_ai.tool.call.id": call.id, "gen_ai.tool.type": "function",
                    "gen_ai.tool.call.arguments": call.function.arguments},
    ) as tool:  # fmt: skip
        result = {"city": json.loads(call.function.arguments)["city"], "sky": "sunny"}
        tool.set_attribute("gen_ai.tool.call.result", json.dumps(result))
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)},
    ]
    client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)

finish(tracer_provider, *sys.argv[1:])
