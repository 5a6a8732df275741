"""A real google-adk agent that exports its spans over OTLP/HTTP; run by bench/.venv-adk/bin/python.

Usage: ``adk_agent.py SESSION_ID [--turns N] [--processor batch|simple]``

The agent is an ``LlmAgent`` on an offline model (``OfflineLlm``: it asks for the tool
when the last message is the user's, and answers in text once the tool's response is
there), one ``FunctionTool`` and a ``before_model_callback``. Each turn runs through an
``InMemoryRunner`` on the session ``SESSION_ID``, so one process gives N traces of one
session (ADK starts a new trace per ``run_async``).

Export is the official ``opentelemetry-exporter-otlp-proto-http`` exporter, configured only
by the standard variables it reads itself: ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` (or
``OTEL_EXPORTER_OTLP_ENDPOINT`` + ``/v1/traces``), ``OTEL_EXPORTER_OTLP_TRACES_HEADERS``
(or ``OTEL_EXPORTER_OTLP_HEADERS``), ``OTEL_EXPORTER_OTLP_TRACES_COMPRESSION``, and
``OTEL_SERVICE_NAME`` / ``OTEL_RESOURCE_ATTRIBUTES`` for the resource. ADK's own telemetry
switches apply as ADK documents them: ``ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1`` gives the
legacy span names (``invocation``, ``call_llm``), and
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY`` puts messages on spans.

The tracer provider is made the global one before google.adk is imported: ADK takes its
tracer with ``trace.get_tracer("gcp.vertex.agent")`` at import, which is a proxy that
follows the global provider, and setting it first keeps that true whatever ADK does.
The provider is flushed and shut down before exit.

With ``AGENTDASH_OTEL_LIVE=1`` the project's ``agentdash.otel.install`` is also called on
the provider (``AGENTDASH_URL``, ``AGENTDASH_INGEST_KEY``): spans are then sent when they
start too; the script exits if it cannot be imported.

Prints one JSON line on stdout: the session id, the trace ids (hex), the span names in end
order, how many export calls failed, and the package versions. Exits 1 if an export failed.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import inspect
import json
import os
import sys
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)

ROOT = Path(__file__).resolve().parents[3]
APP_NAME = "agentdash-interop"
USER_ID = "interop-user"
AGENT_NAME = "capitals"
MODEL_NAME = "offline-model"
TOOL_NAME = "get_capital_city"
QUESTIONS = ("What is the capital of France?", "And the capital of Japan?")
CAPITALS = {"France": "Paris", "Japan": "Tokyo"}
ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


class RecordingExporter(SpanExporter):
    """Delegates to the OTLP exporter and remembers what it was handed and how it went."""

    def __init__(self, inner: SpanExporter) -> None:
        self.inner = inner
        self.names: list[str] = []
        self.trace_ids: list[str] = []
        self.failures = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        for span in spans:
            self.names.append(span.name)
            trace_id = format(span.context.trace_id, "032x")
            if trace_id not in self.trace_ids:
                self.trace_ids.append(trace_id)
        result = self.inner.export(spans)
        if result is not SpanExportResult.SUCCESS:
            self.failures += 1
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


def tracer_provider_install(*, processor: str) -> tuple[TracerProvider, RecordingExporter]:
    """A global ``TracerProvider`` exporting through the OTLP/HTTP exporter. Raises
    ``SystemExit`` when no endpoint variable is set (the exporter would fall back to
    localhost:4318, which is never what a test means)."""
    if not any(os.environ.get(name) for name in ENDPOINT_VARS):
        raise SystemExit(f"set {' or '.join(ENDPOINT_VARS)}")
    resource = Resource.create({SERVICE_NAME: os.environ.get("OTEL_SERVICE_NAME", APP_NAME)})
    provider = TracerProvider(resource=resource)
    exporter = RecordingExporter(OTLPSpanExporter())
    if processor == "simple":
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    else:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return provider, exporter


def agentdash_live_install(provider: TracerProvider) -> bool:
    """Calls ``agentdash.otel.install`` on ``provider`` when asked (AGENTDASH_OTEL_LIVE=1);
    the keyword arguments it takes are matched by name. Asked and unavailable: exits."""
    if os.environ.get("AGENTDASH_OTEL_LIVE", "").strip() != "1":
        return False
    if str(ROOT) not in sys.path:
        sys.path.append(str(ROOT))  # after site-packages: the venv's packages win
    try:
        from agentdash.otel import install  # type: ignore[import-not-found]
    except ImportError as exc:
        raise SystemExit(f"AGENTDASH_OTEL_LIVE=1 but agentdash.otel is unavailable: {exc}") from exc
    offered: dict[str, Any] = {"tracer_provider": provider, "provider": provider}
    accepted = inspect.signature(install).parameters
    install(**{name: value for name, value in offered.items() if name in accepted})
    return True


def get_capital_city(country: str) -> dict[str, str]:
    """Return the capital city of a country."""
    return {"country": country, "capital": CAPITALS.get(country, "unknown")}


def build_agent() -> Any:
    """The LlmAgent: offline model, one FunctionTool, one before_model callback."""
    from google.adk.agents import LlmAgent
    from google.adk.agents.callback_context import CallbackContext
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse
    from google.adk.tools import FunctionTool
    from google.genai import types

    def usage(prompt: int, output: int) -> types.GenerateContentResponseUsageMetadata:
        return types.GenerateContentResponseUsageMetadata(
            prompt_token_count=prompt,
            candidates_token_count=output,
            total_token_count=prompt + output,
        )

    class OfflineLlm(BaseLlm):
        """No network: a function call for a user message, text after a tool response."""

        async def generate_content_async(
            self, llm_request: LlmRequest, stream: bool = False
        ) -> AsyncGenerator[LlmResponse, None]:
            last = llm_request.contents[-1] if llm_request.contents else None
            parts = (last.parts or []) if last else []
            answered = [p.function_response for p in parts if p.function_response]
            if answered:
                result = answered[0].response or {}
                text = f"The capital of {result.get('country')} is {result.get('capital')}."
                part = types.Part(text=text)
                tokens = usage(60, 12)
            else:
                asked = " ".join(p.text or "" for p in parts)
                country = next((c for c in CAPITALS if c in asked), "France")
                call = types.FunctionCall(name=TOOL_NAME, args={"country": country})
                part = types.Part(function_call=call)
                tokens = usage(40, 8)
            yield LlmResponse(
                content=types.Content(role="model", parts=[part]),
                finish_reason=types.FinishReason.STOP,
                usage_metadata=tokens,
                model_version=MODEL_NAME,
            )

    def before_model(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
        callback_context.state["model_calls"] = callback_context.state.get("model_calls", 0) + 1
        return None

    return LlmAgent(
        name=AGENT_NAME,
        description="Answers with the capital city of a country.",
        model=OfflineLlm(model=MODEL_NAME),
        instruction="Answer with the capital city of the country asked about.",
        tools=[FunctionTool(get_capital_city)],
        before_model_callback=before_model,
    )


async def run_turns(*, session_id: str, turns: int) -> list[str]:
    """Runs ``turns`` user messages on session ``session_id``; returns the final texts."""
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    runner = InMemoryRunner(agent=build_agent(), app_name=APP_NAME)
    await runner.session_service.create_session(
        app_name=APP_NAME, user_id=USER_ID, session_id=session_id
    )
    answers = []
    for i in range(turns):
        message = types.Content(role="user", parts=[types.Part(text=QUESTIONS[i % 2])])
        text = ""
        async for event in runner.run_async(
            user_id=USER_ID, session_id=session_id, new_message=message
        ):
            if event.content and event.content.parts and event.content.parts[0].text:
                text = event.content.parts[0].text
        answers.append(text)
    await runner.close()
    return answers


def versions() -> dict[str, str]:
    names = (
        "google-adk",
        "google-genai",
        "opentelemetry-sdk",
        "opentelemetry-exporter-otlp-proto-http",
    )
    return {name: importlib.metadata.version(name) for name in names}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("session_id")
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--processor", choices=("batch", "simple"), default="batch")
    args = parser.parse_args(argv)

    provider, exporter = tracer_provider_install(processor=args.processor)
    live_starts = agentdash_live_install(provider)
    answers = asyncio.run(run_turns(session_id=args.session_id, turns=args.turns))
    flushed = provider.force_flush()
    provider.shutdown()
    report = {
        "session_id": args.session_id,
        "answers": answers,
        "trace_ids": exporter.trace_ids,
        "span_names": exporter.names,
        "flushed": flushed,
        "export_failures": exporter.failures,
        "agentdash_otel": live_starts,
        "versions": versions(),
    }
    print(json.dumps(report), flush=True)
    return 0 if flushed and not exporter.failures else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
