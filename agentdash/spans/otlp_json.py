"""Stored spans in OTLP/JSON: the OpenTelemetry protocol's JSON encoding of an
``ExportTraceServiceRequest`` (``resourceSpans`` → ``scopeSpans`` → ``spans``), which any
OTLP receiver loads (docs/EXPORT.md).

The encoding is protobuf's JSON mapping with OTLP's own rules: ``traceId``, ``spanId`` and
``parentSpanId`` are hex strings (not base64), enums (``kind``, ``status.code``) are
integers, 64-bit integers (times, ``intValue``) are decimal strings, field names are
lowerCamelCase. Fields holding their default value (0, ``""``, empty lists) are left out,
as protobuf's own JSON printer leaves them out, so an export reads back to the same JSON.

A span is given as the span store keeps it (``spans.change_items.span_item``: ``trace_id``,
``span_id``, ``parent_span_id``, ``name``, ``kind``, ``start_time``, ``end_time``, ``status``,
``status_message``, ``attributes``, ``events``, ``otlp``), with, for a span sent from outside,
its ``source`` (``spans.sources.source_item``); any other keys are ignored. A span from outside
goes out as it came in: under its own resource and scope (the others under the resource the
caller gives and the runtime's scope), with its flags, trace state, links and dropped counts,
and without the attributes ingest added (those ``agentdash.ingest.added`` lists, and that key).
Spans in a row with the same source share one ``ResourceSpans``. Whatever a span holds, the
result is valid JSON and valid OTLP:

- every string is valid Unicode (NUL and lone surrogates become U+FFFD);
- an id that is not hex of the right length (or is all zeros, which OTLP reserves for "no
  id") is replaced by one derived from it, the same each time (so a parent link survives),
  and the original is kept in ``agentdash.export.original_*`` attributes;
- attribute values map to ``AnyValue``: ``str`` → ``stringValue``, ``bool`` →
  ``boolValue``, ``int`` → ``intValue`` (a string; outside int64, ``stringValue``),
  ``float`` → ``doubleValue`` (``"NaN"``, ``"Infinity"``, ``"-Infinity"`` as protobuf
  writes them), list → ``arrayValue``, dict → ``kvlistValue``, ``None`` → an empty
  ``AnyValue``; values nested deeper than :data:`MAX_VALUE_DEPTH` are carried as their JSON
  text in a ``stringValue`` (protobuf parsers refuse messages nested about 100 deep);
- an unfinished span (no end) has no ``endTimeUnixNano``.

This module reads nothing and writes nothing: callers bring the spans (in batches, for a
streamed export) and send the text where they like.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypeGuard

from agentdash.core.hygiene import TOO_DEEP, text_storable
from runtime.telemetry.attributes import AgentDash

SCOPE_NAME = "agentdash.runtime"
"""The instrumentation scope of every span: the runtime's tracer
(``runtime/telemetry/tracing.py``). The span store does not keep a span's scope."""

MAX_VALUE_DEPTH = 16
"""Levels of arrays and key-value lists an attribute value keeps; deeper, its JSON text.
Each level is two or three protobuf messages deep, and common parsers (protobuf's Python
and Java JSON parsers) stop at 100."""

SPAN_KIND = {"unspecified": 0, "internal": 1, "server": 2, "client": 3, "producer": 4,
             "consumer": 5}  # fmt: skip
"""The span store's ``kind`` → OTLP ``Span.SpanKind``; anything else is 0 (unspecified)."""

STATUS_CODE = {"unset": 0, "ok": 1, "error": 2}
"""The span store's ``status`` → OTLP ``Status.StatusCode``."""

ORIGINAL_TRACE_ID = "agentdash.export.original_trace_id"
ORIGINAL_SPAN_ID = "agentdash.export.original_span_id"
ORIGINAL_PARENT_SPAN_ID = "agentdash.export.original_parent_span_id"

_INT64 = range(-(2**63), 2**63)
_UINT64_MAX = 2**64 - 1
_HEX = {32: re.compile(r"[0-9a-fA-F]{32}"), 16: re.compile(r"[0-9a-fA-F]{16}")}
_NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def otlp_id(value: Any, *, size: int) -> tuple[str, bool]:
    """``value`` as an OTLP id of ``size`` hex digits (32 for a trace, 16 for a span), lower
    case, and whether it had to be derived (not hex of that length, or all zeros): then it
    is the first digits of the SHA-256 of the value's text, never all zeros."""
    text = value if isinstance(value, str) else str(value)
    if _HEX[size].fullmatch(text) and text.strip("0"):
        return text.lower(), False
    digest = hashlib.sha256(b"agentdash.export:" + text.encode("utf-8", "replace")).hexdigest()
    derived = digest[:size]
    return (derived if derived.strip("0") else "1".rjust(size, "0")), True


def any_value(value: Any, *, depth: int = 0) -> dict[str, Any]:
    """``value`` as an OTLP ``AnyValue`` (see the module docstring for the mapping)."""
    if value is None:
        return {}
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)} if value in _INT64 else {"stringValue": str(value)}
    if isinstance(value, float):
        if not math.isfinite(value):
            return {"doubleValue": _NON_FINITE[str(value)]}
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": _text(value)}
    if isinstance(value, (bytes, bytearray)):
        return {"bytesValue": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, (list, tuple, Mapping)):
        if depth >= MAX_VALUE_DEPTH:
            return {"stringValue": _json_text(value)}
        if isinstance(value, Mapping):
            return {"kvlistValue": _values(key_values(value, depth=depth + 1))}
        return {"arrayValue": _values([any_value(v, depth=depth + 1) for v in value])}
    return {"stringValue": _text(str(value))}


def key_values(attributes: Any, *, depth: int = 0) -> list[dict[str, Any]]:
    """A mapping as OTLP ``KeyValue``s, in its order (keys as text; an empty key is left
    out, as protobuf leaves out an empty string); anything that is not a mapping has none."""
    if not isinstance(attributes, Mapping):
        return []
    found = []
    for key, value in attributes.items():
        text = _text(key if isinstance(key, str) else str(key))
        pair: dict[str, Any] = {"key": text} if text else {}
        pair["value"] = any_value(value, depth=depth)
        found.append(pair)
    return found


def attributes_as_sent(stored: Any) -> dict[str, Any]:
    """A span's stored attributes as its sender sent them: what ingest added left out, what
    it replaced put back (``agentdash.ingest.added``, ``agentdash.ingest.sent.<key>``)."""
    attributes = dict(stored) if _is_map(stored) else {}
    added = attributes.pop(AgentDash.INGEST_ADDED, None)
    if isinstance(added, list):
        for key in added:
            if isinstance(key, str):
                attributes.pop(key, None)
    for key in [k for k in attributes if k.startswith(AgentDash.INGEST_SENT)]:
        attributes[key.removeprefix(AgentDash.INGEST_SENT)] = attributes.pop(key)
    return attributes


def _sent_as_event(event: Any) -> bool:
    """Whether a stored event was sent as one (not a log record ingest made one of)."""
    attributes = event.get("attributes") if _is_map(event) else None
    return _is_map(event) and not (_is_map(attributes) and attributes.get(AgentDash.INGEST_LOG))


def otlp_span(span: Mapping[str, Any]) -> dict[str, Any]:
    """One stored span as an OTLP ``Span`` (see the module docstring)."""
    trace_id, trace_derived = otlp_id(span.get("trace_id") or "", size=32)
    span_id, span_derived = otlp_id(span.get("span_id") or "", size=16)
    attributes = attributes_as_sent(span.get("attributes"))
    if trace_derived:
        attributes[ORIGINAL_TRACE_ID] = str(span.get("trace_id") or "")
    if span_derived:
        attributes[ORIGINAL_SPAN_ID] = str(span.get("span_id") or "")
    out: dict[str, Any] = {"traceId": trace_id, "spanId": span_id}
    parent = span.get("parent_span_id")
    if parent:
        out["parentSpanId"], parent_derived = otlp_id(parent, size=16)
        if parent_derived:
            attributes[ORIGINAL_PARENT_SPAN_ID] = str(parent)
    if span.get("name"):
        out["name"] = _text(str(span["name"]))
    kind = SPAN_KIND.get(str(span.get("kind") or "").lower(), 0)
    if kind:
        out["kind"] = kind
    _put_time(out, "startTimeUnixNano", span.get("start_time"))
    _put_time(out, "endTimeUnixNano", span.get("end_time"))
    if attributes:
        out["attributes"] = key_values(attributes)
    events = [_event(e) for e in span.get("events") or () if _sent_as_event(e)]
    if events:
        out["events"] = events
    status: dict[str, Any] = {}
    if span.get("status_message"):
        status["message"] = _text(str(span["status_message"]))
    code = STATUS_CODE.get(str(span.get("status") or ""), 0)
    if code:
        status["code"] = code
    if status:
        out["status"] = status
    extra = span.get("otlp")
    if _is_map(extra):
        _put_otlp_rest(out, extra)
    return out


def _put_otlp_rest(out: dict[str, Any], extra: Mapping[str, Any]) -> None:
    """The OTLP fields the span store keeps in ``Span.otlp`` (only values OTLP can hold)."""
    flags = extra.get("flags")
    if _is_uint32(flags):
        out["flags"] = flags
    if isinstance(extra.get("traceState"), str) and extra["traceState"]:
        out["traceState"] = _text(extra["traceState"])
    links = [_link(link) for link in extra.get("links") or () if _is_map(link)]
    if links:
        out["links"] = links
    for name in ("droppedAttributesCount", "droppedEventsCount", "droppedLinksCount"):
        if _is_uint32(extra.get(name)) and extra[name]:
            out[name] = extra[name]


def _link(link: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": otlp_id(link.get("traceId") or "", size=32)[0],
        "spanId": otlp_id(link.get("spanId") or "", size=16)[0],
    }
    if isinstance(link.get("traceState"), str) and link["traceState"]:
        out["traceState"] = _text(link["traceState"])
    attributes = key_values(link.get("attributes"))
    if attributes:
        out["attributes"] = attributes
    for name in ("droppedAttributesCount", "flags"):
        if _is_uint32(link.get(name)) and link[name]:
            out[name] = link[name]
    return out


def _is_uint32(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**32


def otlp_resource(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """An OTLP ``Resource`` with these attributes (e.g. ``{"service.name": "capital_agent"}``)."""
    found = key_values(attributes)
    return {"attributes": found} if found else {}


def otlp_json_parts(
    *,
    resource: Mapping[str, Any],
    span_batches: Iterable[Iterable[Mapping[str, Any]]],
    scope_name: str = SCOPE_NAME,
) -> Iterator[str]:
    """An ``ExportTraceServiceRequest`` as JSON text, in parts: the opening, one part per
    batch of spans (each a stored span, see :func:`otlp_span`; the runtime's own under one
    resource with ``resource`` as its attributes and the scope ``scope_name``, those from
    outside under their own), then the closing. Joined, the parts are one JSON document;
    only one batch is held at a time, so a caller reading batches from the database streams
    a trace of any size. With no span at all, the document holds the resource and scope
    alone."""
    yield '{"resourceSpans":['
    group: Any = _NO_GROUP
    for batch in span_batches:
        pieces = []
        for span in batch:
            key = _source_key(span)
            if key != group:
                if group is not _NO_GROUP:
                    pieces.append(_GROUP_END + ",")
                pieces.append(_group_start(span, resource, scope_name))
                group = key
            else:
                pieces.append(",")
            pieces.append(_dumps(otlp_span(span)))
        if pieces:
            yield "".join(pieces)
    if group is _NO_GROUP:
        yield _group_start({}, resource, scope_name)
    yield _GROUP_END + "]}"


def otlp_json_document(
    *,
    resource: Mapping[str, Any],
    spans: Iterable[Mapping[str, Any]],
    scope_name: str = SCOPE_NAME,
) -> dict[str, Any]:
    """The same request as :func:`otlp_json_parts`, whole, as a dict (for small sets of
    spans: a batch sent to a collector, a test)."""
    document: dict[str, Any] = json.loads(
        "".join(otlp_json_parts(resource=resource, span_batches=[spans], scope_name=scope_name))
    )
    return document


_NO_GROUP = object()
_GROUP_END = "]}]}"  # the spans, the scope's object, the scopes, the resource's object


def _source_key(span: Mapping[str, Any]) -> Any:
    source = span.get("source")
    return source.get("id", id(source)) if _is_map(source) else None


def _group_start(span: Mapping[str, Any], resource: Mapping[str, Any], scope_name: str) -> str:
    """The opening of a ``ResourceSpans`` for ``span``'s source (else ``resource`` and the
    scope ``scope_name``), up to its spans' opening bracket."""
    source = span.get("source")
    if _is_map(source) and _is_map(source.get("resource")):
        group = _source_group(source)
    else:
        group = {
            "resource": otlp_resource(resource),
            "scopeSpans": [{"scope": {"name": scope_name} if scope_name else {}, "spans": []}],
        }
    return _dumps(group).removesuffix(_GROUP_END)


def _source_group(source: Mapping[str, Any]) -> dict[str, Any]:
    """A ``ResourceSpans`` with no span, from a span's ``source``."""
    sent_resource: Mapping[str, Any] = source["resource"]
    found_scope = source.get("scope")
    sent_scope: Mapping[str, Any] = found_scope if _is_map(found_scope) else {}
    resource = otlp_resource(sent_resource.get("attributes") or {})
    scope: dict[str, Any] = {}
    for name in ("name", "version"):
        if isinstance(sent_scope.get(name), str) and sent_scope[name]:
            scope[name] = _text(sent_scope[name])
    scope_attributes = key_values(sent_scope.get("attributes"))
    if scope_attributes:
        scope["attributes"] = scope_attributes
    for target, sent in ((resource, sent_resource), (scope, sent_scope)):
        count = sent.get("droppedAttributesCount")
        if _is_uint32(count) and count:
            target["droppedAttributesCount"] = count
    group: dict[str, Any] = {"resource": resource}
    if isinstance(sent_resource.get("schemaUrl"), str) and sent_resource["schemaUrl"]:
        group["schemaUrl"] = _text(sent_resource["schemaUrl"])
    scope_spans: dict[str, Any] = {"scope": scope}
    if isinstance(sent_scope.get("schemaUrl"), str) and sent_scope["schemaUrl"]:
        scope_spans["schemaUrl"] = _text(sent_scope["schemaUrl"])
    scope_spans["spans"] = []
    group["scopeSpans"] = [scope_spans]
    return group


# ── helpers ─────────────────────────────────────────────────────────────────────────────────
def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _values(values: list[dict[str, Any]]) -> dict[str, Any]:
    return {"values": values} if values else {}


def _text(text: str) -> str:
    return text_storable(text)[0]


def _json_text(value: Any) -> str:
    """A value too deep for an ``AnyValue`` tree, as JSON text (every string made valid)."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):  # a cycle, or deeper than Python's stack
        return TOO_DEEP
    return _text(text)


def _is_map(value: Any) -> TypeGuard[Mapping[str, Any]]:
    return isinstance(value, Mapping)


def _put_time(out: dict[str, Any], field: str, value: Any) -> None:
    """A ``fixed64`` time in nanoseconds, as a decimal string; 0, a missing or unusable
    value is left out (protobuf's default)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return
    if 0 < value <= _UINT64_MAX:
        out[field] = str(value)


def _event(event: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    _put_time(out, "timeUnixNano", event.get("time"))
    if event.get("name"):
        out["name"] = _text(str(event["name"]))
    attributes = key_values(event.get("attributes"))
    if attributes:
        out["attributes"] = attributes
    dropped = event.get("dropped_attributes_count")
    if _is_uint32(dropped) and dropped:
        out["droppedAttributesCount"] = dropped
    return out
