"""What every OTLP transport does with an export, whichever carried it (``views`` for
OTLP/HTTP, ``grpc_server`` for OTLP/gRPC): check the key, hold back a key past its rate, and
store the request's spans, or its log records (with their spans)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from agentdash.core.conf import agentdash_setting
from agentdash.core.metrics import INGEST_LOG_RECORDS, INGEST_REJECTED, INGEST_SPANS
from agentdash.ingest.decoders import decoders
from agentdash.ingest.forward import forward_ingested
from agentdash.ingest.keys import ingest_key_check, ingest_key_used
from agentdash.ingest.limits import limiter
from agentdash.ingest.models import IngestKey
from agentdash.ingest.otlp_decode import PROTOBUF, IngestRefused, request_parse
from agentdash.ingest.otlp_logs import unpack_logs
from agentdash.ingest.prepared import Prepared
from agentdash.ingest.services import IngestResult, problems_said, spans_ingest
from agentdash.ingest.span_logs import logs_ingest

NO_KEY = "no ingest key: send the header 'Authorization: Bearer <ingest key>'"


def key_required(raw: str) -> IngestKey:
    """The live key ``raw`` is; :class:`IngestRefused` (401) for none, an unknown or a
    revoked one."""
    if not raw:
        raise IngestRefused(401, NO_KEY)
    key = ingest_key_check(raw)
    if key is None:
        raise IngestRefused(401, "the ingest key is unknown or revoked")
    return key


def rate_wait(key: IngestKey) -> float | None:
    """Seconds ``key`` must wait before its next export is taken (``None``: take it now)."""
    return limiter.take(
        key.prefix,
        rate=agentdash_setting("INGEST_RATE_PER_S"),
        burst=agentdash_setting("INGEST_BURST"),
    )


class _InHand:
    """How many trace exports this process has in hand (read, stored, answered)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.count = 0

    @contextlib.contextmanager
    def one(self) -> Iterator[None]:
        with self._lock:
            self.count += 1
        try:
            yield
        finally:
            with self._lock:
                self.count -= 1


exports_in_hand = _InHand()


def export_prepared(data: bytes, kind: str) -> Prepared:
    """The trace export ``data`` encodes in ``kind``, read and made storable — in a decoding
    process of its own when there is one (``decoders``; split with this process when no
    other export is in hand here: :data:`exports_in_hand`, which the transports keep);
    ``IngestRefused`` (400) when it cannot be read."""
    return decoders.prepared(
        data,
        kind,
        max_value_chars=agentdash_setting("INGEST_MAX_VALUE_CHARS"),
        processes=agentdash_setting("INGEST_DECODE_PROCESSES"),
        alone=exports_in_hand.count <= 1,
    )


def export_store(
    key: IngestKey, prepared: Prepared, *, sent: bytes, kind: str, transport: str = "http"
) -> IngestResult:
    """Store the spans of ``prepared`` for ``key`` (``services.spans_ingest``); when some
    were taken, pass the export on as sent (``sent``, encoded in ``kind``) to the collector
    OTLP out names, if asked to (``forward``)."""
    result = spans_ingest(key=key, prepared=prepared)
    ingest_key_used(key)
    INGEST_SPANS.labels(transport).inc(result.stored)
    INGEST_REJECTED.labels(transport, "spans").inc(result.rejected)
    if result.stored:
        forward_ingested(lambda: sent if kind == PROTOBUF else _protobuf(sent, kind))
    return result


def _protobuf(data: bytes, kind: str) -> bytes:
    return request_parse(data, kind).SerializeToString()


def logs_store(
    key: IngestKey, message: ExportLogsServiceRequest, *, transport: str = "http"
) -> IngestResult:
    """Store the log records of ``message`` for ``key`` as events of their spans
    (``span_logs``)."""
    unpacked = unpack_logs(message, max_value_chars=agentdash_setting("INGEST_MAX_VALUE_CHARS"))
    kept, rejected, problems = logs_ingest(key=key, unpacked=unpacked)
    ingest_key_used(key)
    INGEST_LOG_RECORDS.labels(transport).inc(kept)
    INGEST_REJECTED.labels(transport, "logs").inc(rejected)
    return IngestResult(kept, rejected, problems_said(rejected, problems, "log record"), ())
