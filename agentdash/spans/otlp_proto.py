"""Stored spans in OTLP/protobuf: an ``ExportTraceServiceRequest`` in protobuf's binary
encoding, the body OTLP/HTTP sends as ``application/x-protobuf`` — the encoding every OTLP
receiver takes (Arize Phoenix takes no other at ``/v1/traces``; docs/EXPORT.md).

The request is the one :mod:`agentdash.spans.otlp_json` writes, read into protobuf's own
message: the same spans, ids, attributes and fixes of what a row holds, in the other
encoding. OTLP/JSON writes ids in hex where protobuf's JSON mapping expects base64 for bytes;
they are turned into bytes first, as an OTLP receiver does.

Streamed, batch by batch: serialized protobuf messages written one after another read as one
message whose repeated fields hold every element in order, so each batch is written as a
request of its own holding the batch's spans in their ``ResourceSpans`` (one per run of spans
with the same resource and scope). Joined, the parts are one request. This module reads
nothing and writes nothing."""

from __future__ import annotations

import base64
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from agentdash.spans.otlp_json import SCOPE_NAME, otlp_json_document

CONTENT_TYPE = "application/x-protobuf"
_IDS = ("traceId", "spanId", "parentSpanId")


def otlp_proto_request(document: Mapping[str, Any]) -> ExportTraceServiceRequest:
    """An OTLP/JSON request as :mod:`agentdash.spans.otlp_json` writes it (ids in hex), as
    protobuf's message. Raises ``json_format.ParseError`` for anything else."""
    found = {"resourceSpans": [_resource_spans(r) for r in document.get("resourceSpans", ())]}
    request = ExportTraceServiceRequest()
    json_format.ParseDict(found, request)
    return request


def otlp_proto_parts(
    *,
    resource: Mapping[str, Any],
    span_batches: Iterable[Iterable[Mapping[str, Any]]],
    scope_name: str = SCOPE_NAME,
) -> Iterator[bytes]:
    """An ``ExportTraceServiceRequest`` in protobuf's binary encoding, in parts: one part per
    batch of spans that is not empty (see the module docstring), or, when there is no span,
    one request holding the resource and scope alone (as the OTLP/JSON export does). Only one
    batch is held at a time."""
    written = False
    for batch in span_batches:
        spans = list(batch)
        if not spans:
            continue
        document = otlp_json_document(resource=resource, spans=spans, scope_name=scope_name)
        yield otlp_proto_request(document).SerializeToString()
        written = True
    if not written:
        document = otlp_json_document(resource=resource, spans=(), scope_name=scope_name)
        yield otlp_proto_request(document).SerializeToString()


def _resource_spans(resource_spans: Mapping[str, Any]) -> dict[str, Any]:
    scopes = [
        {**scope, "spans": [_ids_in_base64(span) for span in scope.get("spans", ())]}
        for scope in resource_spans.get("scopeSpans", ())
    ]
    return {**resource_spans, "scopeSpans": scopes}


def _ids_in_base64(span: Mapping[str, Any]) -> dict[str, Any]:
    found = dict(span)
    for field in _IDS:
        if field in found:
            found[field] = _base64(found[field])
    if "links" in found:
        found["links"] = [
            {**link, "traceId": _base64(link["traceId"]), "spanId": _base64(link["spanId"])}
            for link in found["links"]
        ]
    return found


def _base64(hex_id: str) -> str:
    return base64.b64encode(bytes.fromhex(hex_id)).decode("ascii")
