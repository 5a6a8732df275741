"""The worker loop shared by both workloads; stdlib and OpenTelemetry only.

It is imported by ``workload_adk.py`` (run by ``bench/.venv-adk``) and by
``workload_ours.py`` (run by the project venv), so it must not import either side.

Protocol, one JSON object per line: the worker warms up and prints
``{"ready": true, "side": ..., "versions": {...}}``; then each ``{"n": N}`` line on
stdin runs one round of N timed invocations and prints
``{"ns": [...], "spans": S, "events": E}``; end of input ends the worker.
"""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider

APP_NAME = "bench"
USER_ID = "bench-user"
QUESTION = "What is the capital of France?"
ANSWER = "The capital of France is Paris."
WARMUP_ROUNDS = 3


TOOL_CALLS = [0]  # how often get_capital_city ran: each round checks it ran once per invocation


def get_capital_city(country: str) -> str:
    """Return the capital city of a country."""
    TOOL_CALLS[0] += 1
    return {"France": "Paris"}.get(country, "unknown")


@dataclass
class Invocation:
    """What a workload returns for one invocation: its time and what it produced."""

    ns: int
    events: int
    final_text: str


# A workload builds a fresh agent/runner for a round of ``n`` invocations (untimed) and
# returns a coroutine function that runs invocation ``i`` and times it.
RoundFactory = Callable[[int], Awaitable[Callable[[int], Awaitable[Invocation]]]]


class ListSpanProcessor(SpanProcessor):
    """A live span processor: it keeps every span it is handed, on start and on end."""

    def __init__(self) -> None:
        self.started: list[Span] = []
        self.ended: list[ReadableSpan] = []

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        self.started.append(span)

    def on_end(self, span: ReadableSpan) -> None:
        self.ended.append(span)


def configure_otel() -> ListSpanProcessor:
    """Install a global SDK TracerProvider whose only processor is a ListSpanProcessor."""
    processor = ListSpanProcessor()
    provider = TracerProvider()
    provider.add_span_processor(processor)
    trace.set_tracer_provider(provider)
    return processor


def package_versions(*names: str) -> dict[str, str]:
    """Installed versions of ``names``, plus the interpreter's."""
    from importlib.metadata import PackageNotFoundError, version

    found = {"python": sys.version.split()[0]}
    for name in names:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    return found


def serve(side: str, versions: dict[str, str], make_round: RoundFactory, otel: bool) -> None:
    """Warm up, then answer round requests from stdin until it closes."""
    processor = configure_otel() if otel else None
    loop = asyncio.new_event_loop()

    def one_round(n: int) -> dict[str, Any]:
        gc.collect()
        if processor is not None:
            processor.started.clear()
            processor.ended.clear()
        calls_before = TOOL_CALLS[0]
        results = loop.run_until_complete(_run_round(make_round, n))
        if TOOL_CALLS[0] - calls_before != n:
            raise RuntimeError(f"{side}: the tool ran {TOOL_CALLS[0] - calls_before}x, not {n}x")
        for r in results:
            if r.final_text != ANSWER:
                raise RuntimeError(f"{side}: wrong final answer {r.final_text!r}")
        spans = len(processor.ended) / n if processor is not None else 0.0
        if processor is not None and not spans:
            raise RuntimeError(f"{side}: the span processor saw no span")
        return {"ns": [r.ns for r in results], "spans": spans, "events": results[0].events}

    for _ in range(WARMUP_ROUNDS):
        one_round(20)
    _emit({"ready": True, "side": side, "otel": otel, "versions": versions})
    for line in sys.stdin:
        if line.strip():
            _emit(one_round(int(json.loads(line)["n"])))
    loop.close()


async def _run_round(make_round: RoundFactory, n: int) -> list[Invocation]:
    invoke = await make_round(n)
    return [await invoke(i) for i in range(n)]


def _emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def now_ns() -> int:
    return time.perf_counter_ns()
