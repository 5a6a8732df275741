"""``POST /v1/traces`` (and Langfuse's ``/api/public/otel/v1/traces``): OTLP/HTTP trace
export, and ``POST /v1/logs``: log export (each record kept as an event of its span,
``span_logs``), authenticated by an ingest key (``Authorization: Bearer <key>``, or HTTP
Basic with the key as user or password, as Langfuse-style clients send it).

Answers as the OTLP specification says: 200 with an ``ExportTraceServiceResponse`` or
``ExportLogsServiceResponse`` (its ``partial_success`` naming rejected spans or records),
or an error status with a ``google.rpc.Status``
whose message says what is wrong — 400 malformed, 401 no or bad key, 405, 413 too large, 415
not OTLP, 429 too fast (with ``Retry-After``) — each in the request's encoding. A database
that cannot be reached answers 503 (the project's middleware), which exporters retry.
"""

from __future__ import annotations

import base64
import binascii
import logging
import math

from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt

from agentdash.core.conf import agentdash_setting
from agentdash.core.metrics import INGEST_REFUSALS
from agentdash.core.middleware import RETRY_AFTER_SECONDS, takes_no_form
from agentdash.core.outages import caused_by_outage
from agentdash.ingest import otlp_decode
from agentdash.ingest.otlp_decode import JSON, IngestRefused
from agentdash.ingest.receive import (
    export_prepared,
    export_store,
    exports_in_hand,
    key_required,
    logs_store,
    rate_wait,
)

logger = logging.getLogger(__name__)


def _answer(status: int, body: bytes, kind: str) -> HttpResponse:
    return HttpResponse(body, status=status, content_type=kind)


def _refused(error: IngestRefused, kind: str) -> HttpResponse:
    INGEST_REFUSALS.labels("http", str(error.status)).inc()
    body = otlp_decode.failure(error.message, kind, status=error.status)
    response = _answer(error.status, body, kind)
    if error.status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="agentdash ingest"'
    return response


def _encoding(request: HttpRequest) -> str:
    """The encoding to answer in: the request's, else JSON."""
    try:
        return otlp_decode.media_type(request.headers.get("Content-Type", ""))
    except IngestRefused:
        return JSON


def _raw_key(request: HttpRequest) -> str:
    header = request.headers.get("Authorization", "").strip()
    scheme, _, value = header.partition(" ")
    value = value.strip()
    if scheme.lower() == "bearer":
        return value
    if scheme.lower() == "basic":
        try:
            user, _, password = base64.b64decode(value, validate=True).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return ""
        return password if password.startswith("agd_") else user
    return ""


def _body(request: HttpRequest, limit: int) -> bytes:
    declared = request.META.get("CONTENT_LENGTH") or ""
    if declared.isdigit() and int(declared) > limit:
        raise IngestRefused(413, f"the body is larger than {limit} bytes")
    body = request.read(limit + 1)
    if len(body) > limit:
        raise IngestRefused(413, f"the body is larger than {limit} bytes")
    return body


@takes_no_form
@csrf_exempt
@never_cache
def traces(request: HttpRequest) -> HttpResponse:
    with exports_in_hand.one():
        return _guarded(request, logs=False)


@takes_no_form
@csrf_exempt
@never_cache
def logs(request: HttpRequest) -> HttpResponse:
    return _guarded(request, logs=True)


def _guarded(request: HttpRequest, *, logs: bool) -> HttpResponse:
    try:
        return _export(request, logs=logs)
    except Exception as exc:
        if not caused_by_outage(exc):
            raise
        # As OTLP/HTTP asks: a Status in the request's encoding, and when to try again
        # (the exporters retry a 503); nothing was stored.
        logger.warning("OTLP ingest: 503, the database is unreachable: %s", exc)
        refused = IngestRefused(503, "the database is unreachable: try again shortly")
        response = _refused(refused, _encoding(request))
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response


def _export(request: HttpRequest, *, logs: bool) -> HttpResponse:
    kind = JSON
    try:
        if request.method != "POST":
            what = "logs" if logs else "traces"
            response = _refused(IngestRefused(405, f"send {what} with POST"), kind)
            response["Allow"] = "POST"
            return response
        key = key_required(_raw_key(request))
        kind = otlp_decode.media_type(request.headers.get("Content-Type", ""))
        wait = rate_wait(key)
        if wait is not None:
            response = _refused(IngestRefused(429, "too many requests for this key"), kind)
            response["Retry-After"] = str(max(1, math.ceil(wait)))
            return response
        limit = agentdash_setting("INGEST_MAX_BODY_BYTES")
        data = otlp_decode.inflate(
            _body(request, limit), request.headers.get("Content-Encoding", ""), limit
        )
        if logs:
            records = otlp_decode.logs_request_parse(data, kind)
        else:
            prepared = export_prepared(data, kind)
    except IngestRefused as error:
        logger.info("OTLP ingest refused (%s): %s", error.status, error.message)
        return _refused(error, kind)
    if logs:
        result = logs_store(key, records)
    else:
        result = export_store(key, prepared, sent=data, kind=kind)
    answer = otlp_decode.success(result.rejected, result.error_message, kind, logs=logs)
    return _answer(200, answer, kind)
