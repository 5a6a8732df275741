"""Shared fixtures for the runtime tests: one OpenTelemetry SDK for the whole test process.

OpenTelemetry lets the global tracer provider be set only once per process, so it is set here,
once per session, with an in-memory exporter; each test gets that exporter, emptied (``spans``).
The runtime creates its tracer at import time; it is a proxy that follows the global provider
once one is set (``test_runtime_tracer_follows_the_global_provider`` checks that).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


class StartedSpans(SpanProcessor):
    """Keeps every span as it starts, so a test can find spans that never ended."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.active = False  # only while a test asks for them: nothing piles up otherwise

    def on_start(self, span: Span, parent_context: otel_context.Context | None = None) -> None:
        if self.active:
            self.spans.append(span)

    def on_end(self, span: ReadableSpan) -> None:
        pass


@pytest.fixture(scope="session")
def _telemetry() -> tuple[InMemorySpanExporter, StartedSpans]:
    exporter = InMemorySpanExporter()
    started = StartedSpans()
    current = trace.get_tracer_provider()
    if isinstance(current, TracerProvider):
        provider = current  # set by someone first, and it cannot be replaced: export from it
    else:
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    provider.add_span_processor(started)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter, started


@pytest.fixture
def spans(
    _telemetry: tuple[InMemorySpanExporter, StartedSpans],
) -> Iterator[InMemorySpanExporter]:
    """The process's in-memory span exporter, emptied before (and after) the test."""
    exporter, _ = _telemetry
    exporter.clear()
    yield exporter
    exporter.clear()


@pytest.fixture
def started_spans(_telemetry: tuple[InMemorySpanExporter, StartedSpans]) -> Iterator[list[Span]]:
    """Every span started during the test, ended or not (check ``end_time``)."""
    _, started = _telemetry
    started.spans.clear()
    started.active = True
    yield started.spans
    started.active = False
    started.spans.clear()
