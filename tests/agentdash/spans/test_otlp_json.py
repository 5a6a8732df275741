"""Stored spans as OTLP/JSON (agentdash/spans/otlp_json.py), read back by protobuf's own
parser for ``ExportTraceServiceRequest`` as an OTLP receiver reads it (hex ids) — and
printed back by protobuf to the very same JSON."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1 import trace_pb2

from agentdash.spans.otlp_json import (
    MAX_VALUE_DEPTH,
    ORIGINAL_PARENT_SPAN_ID,
    ORIGINAL_SPAN_ID,
    ORIGINAL_TRACE_ID,
    SCOPE_NAME,
    any_value,
    otlp_id,
    otlp_json_document,
    otlp_json_parts,
    otlp_span,
)
from tests.agentdash.otlp_receiver import BadOtlp, otlp_parse, otlp_print, strict_json

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
ROOT = "00f067aa0ba902b7"
CHILD = "b7ad6b7169203331"
NUL, SURROGATE = "\x00", "\ud800"


def stored(span_id: str = CHILD, **fields: Any) -> dict[str, Any]:
    """A span as the span store keeps it (``span_item``)."""
    return {
        "trace_id": TRACE,
        "span_id": span_id,
        "parent_span_id": ROOT,
        "name": "execute_tool get_capital_city",
        "kind": "internal",
        "start_time": 1_700_000_000_123_456_789,
        "end_time": 1_700_000_000_223_456_789,
        "status": "ok",
        "status_message": "",
        "attributes": {"gen_ai.tool.name": "get_capital_city"},
        "events": [],
        "run_id": 7,
        **fields,
    }


def text_of(spans: list[dict[str, Any]], batches: int = 1) -> str:
    size = max(1, math.ceil(len(spans) / batches))
    chunks = [spans[i : i + size] for i in range(0, len(spans), size)]
    return "".join(otlp_json_parts(resource={"service.name": "capital_agent"}, span_batches=chunks))


def only_span(message: ExportTraceServiceRequest) -> trace_pb2.Span:
    (resource,) = message.resource_spans
    (scope,) = resource.scope_spans
    (span,) = scope.spans
    return span


def attributes_of(span: trace_pb2.Span) -> dict[str, Any]:
    """The parsed span's attributes as Python values, through protobuf's own reading."""
    return {kv.key: json_format.MessageToDict(kv.value) for kv in span.attributes}


def test_a_span_reads_back_through_the_otlp_parser_field_by_field() -> None:
    span = stored(
        kind="client",
        status="error",
        status_message="tool failed",
        attributes={
            "text": "Paris",
            "count": 42,
            "ratio": 0.5,
            "flag": False,
            "list": ["a", 1, None],
            "map": {"inner": {"x": [True]}},
        },
        events=[{"name": "exception", "time": 1_700_000_000_200_000_000, "attributes": {"k": "v"}}],
    )
    message = otlp_parse(text_of([span]))

    (resource,) = message.resource_spans
    assert {kv.key: kv.value.string_value for kv in resource.resource.attributes} == {
        "service.name": "capital_agent"
    }
    assert resource.scope_spans[0].scope.name == SCOPE_NAME
    got = only_span(message)
    # The ids survive as the bytes they name (hex in the JSON, as OTLP/JSON says).
    assert got.trace_id == bytes.fromhex(TRACE)
    assert got.span_id == bytes.fromhex(CHILD)
    assert got.parent_span_id == bytes.fromhex(ROOT)
    assert got.name == "execute_tool get_capital_city"
    assert got.kind == trace_pb2.Span.SPAN_KIND_CLIENT
    assert got.start_time_unix_nano == 1_700_000_000_123_456_789
    assert got.end_time_unix_nano == 1_700_000_000_223_456_789
    assert got.status.code == trace_pb2.Status.STATUS_CODE_ERROR
    assert got.status.message == "tool failed"
    values = {kv.key: kv.value for kv in got.attributes}
    assert values["text"].string_value == "Paris"
    assert values["count"].int_value == 42
    assert values["ratio"].double_value == 0.5
    assert values["flag"].HasField("bool_value") and values["flag"].bool_value is False
    assert [v.WhichOneof("value") for v in values["list"].array_value.values] == [
        "string_value",
        "int_value",
        None,
    ]
    (inner,) = values["map"].kvlist_value.values
    assert inner.key == "inner"
    assert inner.value.kvlist_value.values[0].value.array_value.values[0].bool_value is True
    (event,) = got.events
    assert (event.name, event.time_unix_nano) == ("exception", 1_700_000_000_200_000_000)
    assert event.attributes[0].key == "k" and event.attributes[0].value.string_value == "v"


def test_protobuf_prints_the_export_back_to_the_same_json() -> None:
    spans = [
        stored(ROOT, parent_span_id=None, name="invoke_agent capital_agent", end_time=None,
               status="unset"),
        stored(attributes={"n": -(2**63), "big": 2**63, "nan": math.nan, "inf": -math.inf,
                           "empty": [], "none": None, "": ""}),
    ]  # fmt: skip
    text = text_of(spans)
    assert otlp_print(otlp_parse(text)) == json.loads(text)


def test_the_parts_make_the_same_document_however_the_spans_are_batched() -> None:
    spans = [stored(f"{i + 1:016x}", start_time=1_000 + i) for i in range(7)]
    whole = otlp_json_document(resource={"service.name": "capital_agent"}, spans=spans)
    for batches in (1, 2, 3, 7):
        assert json.loads(text_of(spans, batches)) == whole
    parts = list(otlp_json_parts(resource={}, span_batches=[[], spans[:2], [], spans[2:]]))
    assert len(parts) == 4  # the opening, two batches, the closing: empty batches write nothing
    assert len(only_span_list(otlp_parse("".join(parts)))) == 7


def only_span_list(message: ExportTraceServiceRequest) -> list[trace_pb2.Span]:
    return list(message.resource_spans[0].scope_spans[0].spans)


def test_no_spans_is_still_a_request() -> None:
    text = text_of([])
    assert only_span_list(otlp_parse(text)) == []


def test_ids_are_hex_not_base64_and_a_base64_reader_would_get_other_bytes() -> None:
    document = json.loads(text_of([stored()]))
    span = document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert (span["traceId"], span["spanId"], span["parentSpanId"]) == (TRACE, CHILD, ROOT)
    # protobuf's plain JSON mapping takes bytes as base64: without OTLP's hex rule the
    # trace id would be read as 24 other bytes. A receiver applies the rule (otlp_parse).
    plain = json_format.Parse(json.dumps(document), ExportTraceServiceRequest())
    assert only_span(plain).trace_id != bytes.fromhex(TRACE)
    assert only_span(otlp_parse(json.dumps(document))).trace_id == bytes.fromhex(TRACE)


def test_enums_are_integers_and_64_bit_numbers_strings() -> None:
    span = otlp_span(stored(kind="server", status="error", attributes={"n": 5}))
    assert span["kind"] == 2 and span["status"] == {"code": 2}
    assert span["startTimeUnixNano"] == "1700000000123456789"
    assert span["attributes"][0]["value"] == {"intValue": "5"}


@pytest.mark.parametrize(
    ("kind", "code"),
    [("internal", 1), ("server", 2), ("client", 3), ("producer", 4), ("consumer", 5),
     ("INTERNAL", 1), ("unknown", None), ("", None)],
)  # fmt: skip
def test_span_kinds(kind: str, code: int | None) -> None:
    assert otlp_span(stored(kind=kind)).get("kind") == code


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("text", {"stringValue": "text"}),
        ("", {"stringValue": ""}),
        (True, {"boolValue": True}),
        (0, {"intValue": "0"}),
        (2**63 - 1, {"intValue": str(2**63 - 1)}),
        (2**63, {"stringValue": str(2**63)}),  # past int64: kept as its digits
        (1.25, {"doubleValue": 1.25}),
        (math.inf, {"doubleValue": "Infinity"}),
        (None, {}),
        ([], {"arrayValue": {}}),
        ({}, {"kvlistValue": {}}),
        ((1, "a"), {"arrayValue": {"values": [{"intValue": "1"}, {"stringValue": "a"}]}}),
        (b"\x00\xff", {"bytesValue": "AP8="}),
    ],
)
def test_attribute_values(value: Any, expected: dict[str, Any]) -> None:
    assert any_value(value) == expected
    # ... and protobuf reads each as the same AnyValue.
    span = stored(attributes={"v": value})
    assert attributes_of(only_span(otlp_parse(text_of([span]))))["v"] == expected


def test_ids_that_are_not_ids_are_derived_the_same_each_time_and_links_survive() -> None:
    parent = stored("root of mine", parent_span_id=None, trace_id="not a trace")
    child = stored("0" * 16, parent_span_id="root of mine", trace_id="not a trace")
    message = otlp_parse(text_of([parent, child]))
    got_parent, got_child = only_span_list(message)
    assert got_child.parent_span_id == got_parent.span_id  # the link holds
    assert got_parent.trace_id == got_child.trace_id
    assert len(got_parent.trace_id) == 16 and any(got_parent.trace_id)
    assert any(got_child.span_id)  # all zeros is "no id" in OTLP: replaced
    assert otlp_id("root of mine", size=16) == otlp_id("root of mine", size=16)
    assert otlp_id(TRACE.upper(), size=32) == (TRACE, False)
    originals = attributes_of(got_child)
    assert originals[ORIGINAL_TRACE_ID] == {"stringValue": "not a trace"}
    assert originals[ORIGINAL_SPAN_ID] == {"stringValue": "0" * 16}
    assert originals[ORIGINAL_PARENT_SPAN_ID] == {"stringValue": "root of mine"}
    assert ORIGINAL_SPAN_ID not in attributes_of(only_span(otlp_parse(text_of([stored()]))))


def deep(levels: int) -> Any:
    value: Any = "bottom"
    for _ in range(levels):
        value = {"k": [value]}
    return value


def test_hostile_spans_are_valid_json_and_valid_otlp() -> None:
    hostile = f"<script>alert(1)</script>{NUL}{SURROGATE}\udfff"
    span = stored(
        name=hostile,
        status="error",
        status_message=hostile,
        attributes={
            f"key{SURROGATE}": hostile,
            "huge": "h" * 2_000_000,
            "deep": deep(5_000),  # deeper than Python's own json module goes
            "nested": deep(40),
            "floats": [math.nan, math.inf],
        },
        events=[{"name": hostile, "time": 5, "attributes": {NUL: [SURROGATE]}}, "not an event"],
    )
    text = text_of([span])
    strict_json(text)  # UTF-8, no NaN, no lone surrogate, escaped or not
    got = only_span(otlp_parse(text))
    assert got.name == "<script>alert(1)</script>\ufffd\ufffd\ufffd"  # text, as it was
    values = {kv.key: kv.value for kv in got.attributes}
    assert "key\ufffd" in values
    assert len(values["huge"].string_value) == 2_000_000
    # Nesting is kept to MAX_VALUE_DEPTH levels of AnyValue, then carried as JSON text.
    level, depth = values["nested"], 0
    while level.WhichOneof("value") in ("kvlist_value", "array_value"):
        inner = level.kvlist_value.values[0].value if level.HasField("kvlist_value") else None
        level = inner if inner is not None else level.array_value.values[0]
        depth += 1
    assert depth == MAX_VALUE_DEPTH
    assert json.loads(level.string_value) == deep(40 - MAX_VALUE_DEPTH // 2)  # 2 levels each
    assert values["deep"].WhichOneof("value") == "kvlist_value"
    assert [event.name for event in got.events] == ["<script>alert(1)</script>\ufffd\ufffd\ufffd"]


def test_the_receiver_refuses_what_is_not_otlp() -> None:
    """The test's receiver is strict enough to catch what the encoder must never write."""
    good = json.loads(text_of([stored()]))
    span = good["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    for field, bad in (("traceId", TRACE[:-2]), ("spanId", "zz" * 8)):
        broken = json.loads(json.dumps(good))
        broken["resourceSpans"][0]["scopeSpans"][0]["spans"][0][field] = bad
        with pytest.raises(BadOtlp):
            otlp_parse(json.dumps(broken))
    with pytest.raises(json_format.ParseError):
        otlp_parse(json.dumps(good).replace('"kind":', '"spanKind":'))
    with pytest.raises(BadOtlp):
        strict_json('{"a": NaN}')
    with pytest.raises(UnicodeEncodeError):
        strict_json('{"a": "\\ud800"}')
    assert span["traceId"] == TRACE
