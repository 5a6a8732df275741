"""Reading exports back as other tools would: OTLP/JSON through protobuf's own parser, and
any export through a strict JSON reader.

protobuf's JSON mapping writes ``bytes`` fields in base64; OTLP/JSON writes ``traceId``,
``spanId`` and ``parentSpanId`` (of spans and links) in hex instead. An OTLP receiver reads
those fields as hex before the rest goes through the protobuf mapping (the Collector's
decoder does exactly this, and refuses an id of the wrong length); :func:`otlp_parse` does
the same, then hands the document to ``google.protobuf.json_format``.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

ID_SIZES = {"traceId": 16, "spanId": 8, "parentSpanId": 8}  # bytes


class BadOtlp(ValueError):
    """Not a document an OTLP/JSON receiver accepts."""


def strict_json(data: bytes | str) -> Any:
    """``data`` parsed as strict JSON: UTF-8, no ``NaN``/``Infinity``, no lone surrogate
    (escaped or not) anywhere. Raises ``ValueError`` (``UnicodeDecodeError``, ``BadOtlp``,
    ``json.JSONDecodeError``) otherwise."""
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    text.encode("utf-8")  # a raw lone surrogate in a str

    def refuse(name: str) -> None:
        raise BadOtlp(f"{name} is not JSON")

    found = json.loads(text, parse_constant=refuse)
    stack = [found]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            item.encode("utf-8")  # an escaped lone surrogate, decoded
        elif isinstance(item, dict):
            for key, value in item.items():
                key.encode("utf-8")
                stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _ids_to_base64(holder: dict[str, Any]) -> None:
    for field, size in ID_SIZES.items():
        if field not in holder:
            continue
        value = holder[field]
        try:
            raw = bytes.fromhex(value)
        except (TypeError, ValueError) as exc:
            raise BadOtlp(f"{field} {value!r} is not hex") from exc
        if len(raw) != size:
            raise BadOtlp(f"{field} {value!r} is not {size} bytes")
        holder[field] = base64.b64encode(raw).decode("ascii")


def _ids_to_hex(holder: dict[str, Any]) -> None:
    for field in ID_SIZES:
        if field in holder:
            holder[field] = base64.b64decode(holder[field]).hex()


def _spans_and_links(document: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for resource in document.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                found.append(span)
                found.extend(span.get("links", []))
    return found


def otlp_parse(data: bytes | str) -> ExportTraceServiceRequest:
    """An OTLP/JSON ``ExportTraceServiceRequest`` as a receiver reads it: strict JSON, hex
    ids of the right length, then protobuf's JSON parser with unknown fields refused."""
    document = strict_json(data)
    for holder in _spans_and_links(document):
        _ids_to_base64(holder)
    return json_format.ParseDict(document, ExportTraceServiceRequest())


def otlp_print(message: ExportTraceServiceRequest) -> dict[str, Any]:
    """``message`` as protobuf's JSON printer writes it under OTLP's rules (enums as
    integers, ids in hex)."""
    document = json_format.MessageToDict(message, use_integers_for_enums=True)
    for holder in _spans_and_links(document):
        _ids_to_hex(holder)
    return document
