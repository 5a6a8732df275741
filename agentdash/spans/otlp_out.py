"""AgentDash's own spans, copied to a team's OpenTelemetry collector (Jaeger, Phoenix,
Langfuse…). Off by default.

Every process that runs agents — daphne with the inline executor, each Celery worker, a
management command that runs them — sets up its tracer provider in ``LivePipeline.install``,
which calls :func:`otlp_out_install`. When the standard variables name a collector
(``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, and
``OTEL_TRACES_EXPORTER`` is not ``none``), it adds the official
``BatchSpanProcessor(OTLPSpanExporter())``, which reads the rest itself (headers, timeout,
compression, certificates; ``OTEL_BSP_*`` for the batches). The processor only appends to a
bounded queue on the agent's path and exports from its own thread: a collector that is down
or slow costs a run nothing (past the queue, spans are dropped from the copy, with the
SDK's warning). The copy is of every span, whatever the live pipeline keeps.

The official Python exporter speaks ``http/protobuf`` only: asked for ``http/json`` it sends
protobuf anyway (OTLP/HTTP's default, which the Collector, Jaeger, Phoenix and Langfuse
take); asked for ``grpc``, nothing is sent. Either is logged once, at start.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections.abc import Mapping
from typing import NamedTuple

from opentelemetry.context import Context
from opentelemetry.sdk.resources import SERVICE_NAME, OTELResourceDetector, Resource
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider

logger = logging.getLogger(__name__)

DEFAULT_SERVICE_NAME = "agentdash"
HTTP_PROTOBUF = "http/protobuf"


def agentdash_resource() -> Resource:
    """The resource of this process's spans: the SDK's (``OTEL_RESOURCE_ATTRIBUTES``,
    ``OTEL_SERVICE_NAME`` — the latter wins, as in the SDK) with ``service.name``
    ``agentdash`` unless one of them names the service."""
    detected = OTELResourceDetector().detect()
    return Resource.create({SERVICE_NAME: DEFAULT_SERVICE_NAME}).merge(detected)


class Plan(NamedTuple):
    """What the variables ask: ``export`` or not, and ``note``: what to tell the operator
    (a protocol we cannot speak, an exporter we do not have), else ``""``."""

    export: bool
    note: str = ""


def otlp_out_plan(environ: Mapping[str, str]) -> Plan:
    """Read the standard variables (an empty one counts as unset)."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return Plan(False)
    if not (
        environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    ):
        return Plan(False)
    wanted = {
        name.strip().lower()
        for name in (environ.get("OTEL_TRACES_EXPORTER") or "otlp").split(",")
        if name.strip()
    }
    if "none" in wanted:
        return Plan(False)
    if "otlp" not in wanted:
        return Plan(
            False,
            f"OTEL_TRACES_EXPORTER={','.join(sorted(wanted))}: AgentDash "
            "copies its spans with the OTLP exporter only; not copying them",
        )
    variable = (
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
        if environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        else "OTEL_EXPORTER_OTLP_PROTOCOL"
    )
    protocol = (environ.get(variable) or HTTP_PROTOBUF).strip().lower()
    if protocol == HTTP_PROTOBUF:
        return Plan(True)
    if protocol == "http/json":
        return Plan(
            True,
            f"{variable}=http/json: the official Python exporter sends "
            "http/protobuf only; sending http/protobuf",
        )
    if protocol == "grpc":
        return Plan(
            False,
            f"{variable}=grpc: AgentDash copies its spans over OTLP/HTTP only "
            "(opentelemetry-exporter-otlp-proto-grpc is not installed); not copying "
            "them. Set http/protobuf and the collector's HTTP address (port 4318).",
        )
    return Plan(False, f"{variable}={protocol!r} is no OTLP protocol; not copying spans")


class OtlpOutSeat(SpanProcessor):
    """The copy's place on a provider: forwards to the batch processor while there is one.
    (The SDK cannot remove a processor; :func:`otlp_out_uninstall` empties the seat.)"""

    def __init__(self) -> None:
        self.processor: SpanProcessor | None = None

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        processor = self.processor
        if processor is not None:
            processor.on_start(span, parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        processor = self.processor
        if processor is not None:
            processor.on_end(span)

    def shutdown(self) -> None:
        processor = self.processor
        if processor is not None:
            processor.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        processor = self.processor
        return True if processor is None else processor.force_flush(timeout_millis)


_seat = OtlpOutSeat()
_seated: weakref.WeakSet[TracerProvider] = weakref.WeakSet()
_lock = threading.Lock()
_noted: set[str] = set()


def otlp_out_install(provider: TracerProvider) -> SpanProcessor | None:
    """Copy ``provider``'s spans to the collector the variables name, if they name one: the
    batch processor doing it (the same one on every call until :func:`otlp_out_uninstall`),
    or ``None``. Logs, once, a request it cannot follow."""
    plan = otlp_out_plan(os.environ)
    with _lock:
        if plan.note and plan.note not in _noted:
            _noted.add(plan.note)
            (logger.warning if plan.export else logger.error)(plan.note)
        if not plan.export:
            return _seat.processor
        if _seat.processor is None:
            try:
                _seat.processor = _batch_processor()
            except Exception:  # a copy that cannot be set up must not stop the runs
                logger.exception("cannot copy AgentDash's spans to a collector")
                return None
            logger.info("copying AgentDash's spans to %s", _traces_endpoint(os.environ))
        if provider not in _seated:
            provider.add_span_processor(_seat)
            _seated.add(provider)
        return _seat.processor


def _batch_processor() -> SpanProcessor:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    return BatchSpanProcessor(OTLPSpanExporter())


def _traces_endpoint(environ: Mapping[str, str]) -> str:
    # As the exporter reads it, for the log line.
    traces = environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    return traces or f"{environ['OTEL_EXPORTER_OTLP_ENDPOINT'].rstrip('/')}/v1/traces"


def otlp_out_uninstall() -> None:
    """Stop copying: send what waits (the SDK gives it up to 30 s) and empty the seat. For
    tests and shutdown."""
    with _lock:
        processor, _seat.processor = _seat.processor, None
        _noted.clear()
    if processor is not None:
        processor.shutdown()
