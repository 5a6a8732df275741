"""What every sender app shares (standard library and the OpenTelemetry SDK only): the
tracer provider, exporting with the official OTLP/HTTP exporter configured by the standard
variables alone (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, ``..._HEADERS``), set as the global
one before any instrumented library is imported; with ``OTEL_EXPORTER_OTLP_LOGS_ENDPOINT``
set, a logger provider too (the OTLP/HTTP log exporter: where instrumentations that record
messages as log events send them); the closing line the runner reads."""

from __future__ import annotations

import importlib.metadata
import json
import os
import sys
from typing import Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExportResult

FAILURES: list[str] = []
_LOGS: list[Any] = []  # the logger provider, when the app exports logs


class _Exporter(OTLPSpanExporter):
    def export(self, spans: Any) -> SpanExportResult:
        result = super().export(spans)
        if result is not SpanExportResult.SUCCESS:
            FAILURES.append(str(result))
        return result


def provider(service: str, **resource: Any) -> TracerProvider:
    """The global tracer provider of an app named ``service`` (more resource attributes as
    keyword arguments, ``__`` for ``.``)."""
    attributes = {"service.name": service, **{k.replace("__", "."): v for k, v in resource.items()}}
    found = TracerProvider(resource=Resource.create(attributes))
    found.add_span_processor(BatchSpanProcessor(_Exporter(), schedule_delay_millis=60_000))
    trace.set_tracer_provider(found)
    if os.environ.get("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"):
        from opentelemetry._logs import set_logger_provider
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import BatchLogRecordProcessor

        logs = LoggerProvider(resource=Resource.create(attributes))
        logs.add_log_record_processor(
            BatchLogRecordProcessor(OTLPLogExporter(), schedule_delay_millis=60_000)
        )
        set_logger_provider(logs)
        _LOGS.append(logs)
    return found


def finish(found: TracerProvider, *packages: str) -> None:
    """Export everything (one POST: the batch processor's delay is long), then print the
    versions of ``packages`` as one JSON line; exit 1 if an export failed."""
    found.force_flush()
    found.shutdown()
    for logs in _LOGS:
        logs.force_flush()
        logs.shutdown()
    versions = {}
    for name in packages:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    print(json.dumps({"versions": versions, "failures": FAILURES}))
    sys.exit(1 if FAILURES else 0)
