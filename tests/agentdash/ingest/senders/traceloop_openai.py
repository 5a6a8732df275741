"""An OpenAI app traced by OpenLLMetry (``traceloop-sdk``: its OpenAI instrumentation and its
``@agent`` / ``@tool`` decorators), exporting with the official OTLP/HTTP exporter: LLM spans
carry the flattened ``gen_ai.prompt.*`` / ``gen_ai.completion.*``, decorated functions
``traceloop.entity.input`` / ``traceloop.entity.output``."""

from __future__ import annotations

import json
import sys

import openai
from _app import FAILURES, finish
from fake_openai import MODEL, QUESTION, SYSTEM, TOOLS, serve
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult
from traceloop.sdk import Traceloop
from traceloop.sdk.decorators import agent, tool


class Exporter(OTLPSpanExporter):
    def export(self, spans):  # type: ignore[no-untyped-def]
        result = super().export(spans)
        if result is not SpanExportResult.SUCCESS:
            FAILURES.append(str(result))
        return result


Traceloop.init(app_name="traceloop-weather", exporter=Exporter(), telemetry_enabled=False)
Traceloop.set_association_properties({"session_id": "traceloop-session-1", "user_id": "u-7"})
client = openai.OpenAI(base_url=serve(), api_key="sk-fake")


@tool(name="get_weather")
def get_weather(city: str) -> dict[str, object]:
    return {"city": city, "sky": "sunny", "celsius": 21}


@agent(name="weather_agent")
def weather_agent(question: str) -> str | None:
    messages: list[dict[str, object]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": question},
    ]
    first = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
    call = first.choices[0].message.tool_calls[0]
    result = get_weather(**json.loads(call.function.arguments))
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)},
    ]
    second = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
    return second.choices[0].message.content


weather_agent(QUESTION)
finish(trace.get_tracer_provider(), *sys.argv[1:])  # type: ignore[arg-type]
