"""Shared fixtures for the runtime tests: one OpenTelemetry SDK for the whole test process.

OpenTelemetry lets the global tracer provider be set only once per process, so it is set here,
once per session, with an in-memory exporter; each test gets that exporter, emptied (``spans``).
The runtime creates its tracer at import time; it is a proxy that follows the global provider
once one is set (``test_runtime_tracer_follows_the_global_provider`` checks that).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


@pytest.fixture(scope="session")
def _span_exporter() -> InMemorySpanExporter:
    exporter = InMemorySpanExporter()
    current = trace.get_tracer_provider()
    if isinstance(current, TracerProvider):
        # Someone set the SDK provider first (it cannot be replaced): export from it too.
        current.add_span_processor(SimpleSpanProcessor(exporter))
    else:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
    return exporter


@pytest.fixture
def spans(_span_exporter: InMemorySpanExporter) -> Iterator[InMemorySpanExporter]:
    """The process's in-memory span exporter, emptied before (and after) the test."""
    _span_exporter.clear()
    yield _span_exporter
    _span_exporter.clear()
