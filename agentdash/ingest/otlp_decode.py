"""OTLP/HTTP request bodies read into ``ExportTraceServiceRequest`` or
``ExportLogsServiceRequest`` (the official ``opentelemetry-proto`` classes), and answers
written back in the request's own encoding.

Both encodings of the OTLP specification: binary protobuf (``application/x-protobuf``) and
the JSON mapping (``application/json``) — protobuf's JSON mapping except that trace and span
ids are hex, not base64; 64-bit integers may be strings or numbers, enums names or numbers,
and unknown fields are ignored, as the specification asks of receivers. A body may be
``gzip``-compressed (``Content-Encoding``); it is inflated no further than the size cap, so a
small bomb cannot fill memory.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message
from google.rpc import status_pb2
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
_MEDIA_TYPES = {PROTOBUF: PROTOBUF, "application/protobuf": PROTOBUF, JSON: JSON}
_ID_FIELDS = {"traceId": 16, "spanId": 8, "parentSpanId": 8}
_GRPC_INVALID_ARGUMENT = 3  # google.rpc.Code
# The google.rpc code each HTTP answer stands for (gRPC's own HTTP mapping, read backwards).
_GRPC_CODES = {
    400: _GRPC_INVALID_ARGUMENT,
    401: 16,  # UNAUTHENTICATED
    403: 7,  # PERMISSION_DENIED
    405: 12,  # UNIMPLEMENTED
    413: 8,  # RESOURCE_EXHAUSTED
    415: _GRPC_INVALID_ARGUMENT,
    429: 8,  # RESOURCE_EXHAUSTED
    503: 14,  # UNAVAILABLE
}
_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # pairs were joined by the JSON parser


class IngestRefused(ValueError):
    """The request cannot be taken: ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message

    def __reduce__(self) -> tuple[type[IngestRefused], tuple[int, str]]:
        # Raised in a decoding process too (``decoders``): it crosses back whole.
        return (IngestRefused, (self.status, self.message))


def media_type(content_type: str) -> str:
    """The body's encoding (``PROTOBUF`` or ``JSON``) named by a ``Content-Type`` header."""
    found = _MEDIA_TYPES.get(content_type.split(";", 1)[0].strip().lower())
    if found is None:
        shown = content_type[:100] or "(none)"
        raise IngestRefused(415, f"Content-Type {shown} is not OTLP: send {PROTOBUF} or {JSON}")
    return found


def inflate(body: bytes, content_encoding: str, max_bytes: int) -> bytes:
    """``body`` as sent (identity) or gunzipped, refused past ``max_bytes`` either way."""
    encoding = content_encoding.strip().lower()
    if encoding in ("", "identity"):
        data = body
    elif encoding in ("gzip", "x-gzip"):
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            data = inflater.decompress(body, max_bytes + 1)
        except zlib.error as exc:
            raise IngestRefused(400, f"the body is not valid gzip: {exc}") from None
        if len(data) <= max_bytes and not inflater.eof and not inflater.unconsumed_tail:
            raise IngestRefused(400, "the gzip body ends early (truncated)")
    else:
        raise IngestRefused(
            415, f"Content-Encoding {content_encoding[:40]!r} is not supported: use gzip"
        )
    if len(data) > max_bytes:
        raise IngestRefused(413, f"the body is larger than {max_bytes} bytes (uncompressed)")
    return data


def request_parse(data: bytes, kind: str) -> ExportTraceServiceRequest:
    """The trace export ``data`` encodes in ``kind``; :class:`IngestRefused` (400) saying
    what is wrong otherwise."""
    message = ExportTraceServiceRequest()
    _parse(data, kind, message)
    return message


def logs_request_parse(data: bytes, kind: str) -> ExportLogsServiceRequest:
    """The log export ``data`` encodes in ``kind``, as :func:`request_parse` reads traces."""
    message = ExportLogsServiceRequest()
    _parse(data, kind, message)
    return message


def _parse(data: bytes, kind: str, message: Message) -> None:
    what = type(message).__name__
    if kind == PROTOBUF:
        try:
            message.ParseFromString(data)
        except (DecodeError, RecursionError, ValueError) as exc:
            raise IngestRefused(400, f"the body is not a protobuf {what}: {exc}") from None
        return
    try:
        document = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise IngestRefused(400, f"the JSON body is not UTF-8: {exc}") from None
    except RecursionError:
        raise IngestRefused(400, "the JSON body is nested too deeply") from None
    except ValueError as exc:
        raise IngestRefused(400, f"the body is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise IngestRefused(400, f"the JSON body is not an object ({what})")
    if _ESCAPED_SURROGATE.search(data):
        # Protobuf strings are UTF-8 and cannot hold a lone surrogate, which JSON can (as an
        # escape): it becomes U+FFFD rather than costing the whole batch.
        try:
            document = _surrogates_replaced(document)
        except RecursionError:
            raise IngestRefused(400, "the JSON body is nested too deeply") from None
    _ids_to_base64(document)
    try:
        json_format.ParseDict(document, message, ignore_unknown_fields=True)
    except (json_format.ParseError, RecursionError, ValueError, TypeError) as exc:
        raise IngestRefused(400, f"the JSON body is not an OTLP {what}: {exc}") from None


def _surrogates_replaced(value: Any) -> Any:
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_surrogates_replaced(item) for item in value]
    if isinstance(value, dict):
        return {_surrogates_replaced(k): _surrogates_replaced(v) for k, v in value.items()}
    return value


def _ids_to_base64(document: dict[str, Any]) -> None:
    """OTLP/JSON's hex ids, turned into protobuf JSON's base64 in place (where they are:
    spans and their links, log records); an id that is not hex says where it is."""
    for r, resource_logs in enumerate(_list(document.get("resourceLogs"))):
        for s, scope_logs in enumerate(_list(_dict(resource_logs).get("scopeLogs"))):
            for n, record in enumerate(_list(_dict(scope_logs).get("logRecords"))):
                _id_fields(_dict(record), f"resourceLogs[{r}].scopeLogs[{s}].logRecords[{n}]")
    for r, resource_spans in enumerate(_list(document.get("resourceSpans"))):
        for s, scope_spans in enumerate(_list(_dict(resource_spans).get("scopeSpans"))):
            for n, span in enumerate(_list(_dict(scope_spans).get("spans"))):
                where = f"resourceSpans[{r}].scopeSpans[{s}].spans[{n}]"
                _id_fields(_dict(span), where)
                for k, link in enumerate(_list(_dict(span).get("links"))):
                    _id_fields(_dict(link), f"{where}.links[{k}]")


def _id_fields(item: dict[str, Any], where: str) -> None:
    for field in _ID_FIELDS:
        value = item.get(field)
        if value is None or value == "":
            continue
        if not isinstance(value, str):
            raise IngestRefused(400, f"{where}.{field} is not a hex string")
        try:
            raw = binascii.unhexlify(value)
        except (binascii.Error, ValueError):
            raise IngestRefused(
                400, f"{where}.{field} is not hex (OTLP/JSON ids are hex, not base64)"
            ) from None
        item[field] = base64.b64encode(raw).decode("ascii")


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def encoded(message: Message, kind: str) -> bytes:
    """``message`` in the request's encoding (protobuf JSON for ``JSON``, ids untouched: an
    answer carries none)."""
    if kind == PROTOBUF:
        return message.SerializeToString()
    return json.dumps(json_format.MessageToDict(message)).encode()


def success(rejected: int, error_message: str, kind: str, *, logs: bool = False) -> bytes:
    """An ``ExportTraceServiceResponse`` (``logs``: an ``ExportLogsServiceResponse``):
    ``partial_success`` set only when spans (log records) were rejected, or there is
    something to say, as the specification asks."""
    response: Message
    if logs:
        response = ExportLogsServiceResponse()
        if rejected or error_message:
            response.partial_success.rejected_log_records = rejected
            response.partial_success.error_message = error_message
        return encoded(response, kind)
    response = ExportTraceServiceResponse()
    if rejected or error_message:
        response.partial_success.rejected_spans = rejected
        response.partial_success.error_message = error_message
    return encoded(response, kind)


def failure(message: str, kind: str, *, status: int = 400) -> bytes:
    """A ``google.rpc.Status`` carrying ``message``: the body of an answer other than 200
    (OTLP/HTTP asks for one on every 4xx and 5xx), its code by the HTTP ``status``."""
    code = _GRPC_CODES.get(status, _GRPC_INVALID_ARGUMENT)
    return encoded(status_pb2.Status(code=code, message=message), kind)
