"""The log records of an ``ExportLogsServiceRequest``, as the events of the spans they belong
to. AgentDash keeps logs with their spans: a record that carries its span's context (a trace
and span id) becomes an event of that span — named by its ``event_name`` (or, from senders
before that field, its ``event.name`` attribute), else ``log`` — with its attributes, its body
(a map as JSON text in ``gen_ai.event.content``, where the GenAI conventions' first events
kept a message; anything else in ``log.body``), its severity (``log.severity``), and
``agentdash.ingest.log`` true: an event that came as a log, left out when the span is
exported. Values are capped as a span's are (``otlp_spans.Caps``).

A record without a span context has no place on a timeline: it is rejected, and the answer's
partial success says how many and why. So is a record whose ids OTLP forbids.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from agentdash.core.hygiene import storable
from agentdash.ingest.otlp_spans import Caps
from runtime.telemetry.attributes import AgentDash

MAX_ATTRIBUTES = 128
BODY = "gen_ai.event.content"


@dataclass
class IncomingLog:
    """One record as an event of span ``(trace_id, span_id)``."""

    trace_id: str
    span_id: str
    event: dict[str, Any]


@dataclass
class UnpackedLogs:
    records: list[IncomingLog]
    rejected: int
    problems: list[str]


def unpack_logs(request: ExportLogsServiceRequest, *, max_value_chars: int) -> UnpackedLogs:
    records: list[IncomingLog] = []
    rejected = 0
    problems: list[str] = []
    for resource_logs in request.resource_logs:
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                trace_id, span_id = record.trace_id, record.span_id
                if (
                    len(trace_id) != 16
                    or len(span_id) != 8
                    or not any(trace_id)
                    or not any(span_id)
                ):
                    rejected += 1
                    continue
                records.append(
                    IncomingLog(trace_id.hex(), span_id.hex(), _event(record, max_value_chars))
                )
    if rejected:
        problems.append(
            f"{rejected} log record(s) carry no span context (a trace and a span id): "
            "AgentDash keeps logs with their spans"
        )
    return UnpackedLogs(records, rejected, problems)


def _event(record: Any, max_value_chars: int) -> dict[str, Any]:
    caps = Caps(max_value_chars)
    attributes = caps.attributes(record.attributes, limit=MAX_ATTRIBUTES)
    name = getattr(record, "event_name", "") or attributes.pop("event.name", None) or "log"
    if record.HasField("body"):
        body = caps.value(record.body, "(log body)")
        if isinstance(body, dict):  # its text storable before it is JSON text
            attributes[BODY] = json.dumps(storable(body)[0], ensure_ascii=False)
        elif body is not None:
            attributes["log.body"] = body
    severity = record.severity_text or (
        str(record.severity_number) if record.severity_number else ""
    )
    if severity:
        attributes["log.severity"] = severity
    attributes[AgentDash.INGEST_LOG] = True
    found: dict[str, Any] = {
        "name": caps.text(str(name), "(event name)"),
        "time": record.time_unix_nano or record.observed_time_unix_nano,
        "attributes": attributes,
    }
    if caps.truncated:
        found["attributes"]["agentdash.ingest.truncated"] = sorted(set(caps.truncated))
    return found
