"""OTLP/gRPC: the ``Export`` methods of ``opentelemetry.proto.collector.trace.v1.TraceService``
and ``...logs.v1.LogsService``, on port 4317 by default (``AGENTDASH_OTLP_GRPC``), the same
ingest as ``POST /v1/traces`` and ``POST /v1/logs``.

The key comes from the ``authorization`` metadata (``Bearer <key>``, as the exporters'
``OTEL_EXPORTER_OTLP_HEADERS`` send it), gzip is gRPC's own (``grpc-encoding``), and the
limits are OTLP/HTTP's: a message larger than ``AGENTDASH_INGEST_MAX_BODY_BYTES`` (as sent
or decompressed) is refused by gRPC itself. Answers, as the OTLP specification asks:

- ``OK`` with an ``ExportTraceServiceResponse`` (``ExportLogsServiceResponse``), its
  ``partial_success`` naming the spans (log records) not taken;
- ``UNAUTHENTICATED`` no, unknown or revoked key; ``INVALID_ARGUMENT`` not an
  ``ExportTraceServiceRequest`` (what is wrong in the message); ``RESOURCE_EXHAUSTED`` too
  large, or (with ``google.rpc.RetryInfo``, which exporters honour) a key past its rate;
  ``UNAVAILABLE`` (with ``RetryInfo``) the database is unreachable — nothing stored, the
  exporter retries; ``INTERNAL`` anything else, logged, the server going on;
  ``UNIMPLEMENTED`` any other method.

The request is read raw (no deserializer of gRPC's), so a malformed message is an
``INVALID_ARGUMENT`` that says why, not gRPC's generic deserialization failure. Handlers run
on a pool of threads, each using Django's database connection of its thread as a request
does (closed when too old, as at a request's end).
"""

from __future__ import annotations

import logging
import math
import os
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NoReturn

import grpc
from django.db import close_old_connections
from google.protobuf import any_pb2, duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2

from agentdash.core.conf import agentdash_setting
from agentdash.core.metrics import INGEST_REFUSALS
from agentdash.core.middleware import RETRY_AFTER_SECONDS
from agentdash.core.outages import caused_by_outage
from agentdash.ingest import otlp_decode
from agentdash.ingest.otlp_decode import PROTOBUF, IngestRefused
from agentdash.ingest.receive import (
    export_prepared,
    export_store,
    exports_in_hand,
    key_required,
    logs_store,
    rate_wait,
)

logger = logging.getLogger(__name__)

SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
EXPORT = f"/{SERVICE}/Export"
LOGS_EXPORT = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"
DETAILS_KEY = "grpc-status-details-bin"
_CODES = {
    400: grpc.StatusCode.INVALID_ARGUMENT,
    401: grpc.StatusCode.UNAUTHENTICATED,
    413: grpc.StatusCode.RESOURCE_EXHAUSTED,
    415: grpc.StatusCode.INVALID_ARGUMENT,
    429: grpc.StatusCode.RESOURCE_EXHAUSTED,
    503: grpc.StatusCode.UNAVAILABLE,
}


def export(body: bytes, context: grpc.ServicerContext) -> bytes:
    """The traces' ``Export``: ``body`` is the serialized request; the serialized response."""
    close_old_connections()
    try:
        with exports_in_hand.one():
            return _export(body, context, logs=False)
    finally:
        close_old_connections()


def export_logs(body: bytes, context: grpc.ServicerContext) -> bytes:
    """The logs' ``Export``, as :func:`export`."""
    close_old_connections()
    try:
        return _export(body, context, logs=True)
    finally:
        close_old_connections()


def _export(body: bytes, context: grpc.ServicerContext, *, logs: bool) -> bytes:
    retry: float | None = None
    try:
        key = key_required(_raw_key(context.invocation_metadata()))
        retry = rate_wait(key)
        if retry is not None:
            raise IngestRefused(429, "too many requests for this key")
        if logs:
            result = logs_store(
                key, otlp_decode.logs_request_parse(body, PROTOBUF), transport="grpc"
            )
        else:
            prepared = export_prepared(body, PROTOBUF)
            result = export_store(key, prepared, sent=body, kind=PROTOBUF, transport="grpc")
    except IngestRefused as error:
        logger.info("OTLP/gRPC ingest refused (%s): %s", error.status, error.message)
        _abort(context, error, retry=retry)
    except Exception as exc:
        if not caused_by_outage(exc):
            logger.exception("OTLP/gRPC ingest failed")
            _abort(context, IngestRefused(500, "the export could not be stored (logged)"))
        logger.warning("OTLP/gRPC ingest: the database is unreachable: %s", exc)
        refused = IngestRefused(503, "the database is unreachable: try again shortly")
        _abort(context, refused, retry=RETRY_AFTER_SECONDS)
    return otlp_decode.success(result.rejected, result.error_message, PROTOBUF, logs=logs)


def _raw_key(metadata: Any) -> str:
    for name, value in metadata or ():
        if name.lower() == "authorization" and isinstance(value, str):
            scheme, _, token = value.strip().partition(" ")
            return token.strip() if scheme.lower() == "bearer" else value.strip()
    return ""


def _abort(
    context: grpc.ServicerContext, error: IngestRefused, retry: float | None = None
) -> NoReturn:
    """End the call with ``error``'s status; with ``retry``, a ``google.rpc.RetryInfo``
    saying when to come back (how OTLP/gRPC asks an exporter to retry). Raises."""
    INGEST_REFUSALS.labels("grpc", str(error.status)).inc()
    code = _CODES.get(error.status, grpc.StatusCode.INTERNAL)
    if retry is not None:
        delay = duration_pb2.Duration(seconds=max(1, math.ceil(retry)))
        detail = any_pb2.Any()
        detail.Pack(error_details_pb2.RetryInfo(retry_delay=delay))
        status = status_pb2.Status(
            code=getattr(code_pb2, code.name), message=error.message, details=[detail]
        )
        context.set_trailing_metadata(((DETAILS_KEY, status.SerializeToString()),))
    context.abort(code, error.message)
    raise AssertionError("grpc's abort returned")  # it raises


class _Handler(grpc.GenericRpcHandler):
    def service(self, handler_call_details: Any) -> grpc.RpcMethodHandler | None:
        if handler_call_details.method == EXPORT:
            return grpc.unary_unary_rpc_method_handler(export)
        if handler_call_details.method == LOGS_EXPORT:
            return grpc.unary_unary_rpc_method_handler(export_logs)
        return None  # UNIMPLEMENTED


def grpc_server_start(
    address: str, *, workers: int | None = None, on_bound: Callable[[int], None] | None = None
) -> grpc.Server | None:
    """Serve OTLP/gRPC on ``address`` (``host:port``; port 0: any free one) with ``workers``
    threads (default ``AGENTDASH_OTLP_GRPC_WORKERS``); the started server, or ``None`` (said
    in the log) when the address cannot be bound. ``on_bound`` is told the port bound."""
    threads = workers or int(agentdash_setting("OTLP_GRPC_WORKERS"))
    limit = int(agentdash_setting("INGEST_MAX_BODY_BYTES"))
    server = grpc.server(
        ThreadPoolExecutor(max_workers=threads, thread_name_prefix="otlp-grpc"),
        handlers=[_Handler()],
        maximum_concurrent_rpcs=threads * 16,
        options=[
            ("grpc.max_receive_message_length", limit),
            ("grpc.max_send_message_length", 4 * 1024 * 1024),
            ("grpc.so_reuseport", 0),  # one owner per port: a second server fails to bind
        ],
    )
    try:
        port = server.add_insecure_port(address)
    except RuntimeError as exc:
        port = 0
        logger.warning("OTLP/gRPC: cannot listen on %s (%s): not serving gRPC", address, exc)
    if not port:
        logger.warning("OTLP/gRPC: cannot listen on %s: not serving gRPC", address)
        return None
    server.start()
    logger.info("OTLP/gRPC: serving the TraceService on %s (port %s)", address, port)
    if on_bound is not None:
        on_bound(port)
    return server


_served: list[grpc.Server] = []  # this process's server, kept alive with the process


def _a_command_that_serves_nothing() -> bool:
    """``manage.py migrate``, ``check`` and the rest import the application (a system check
    reads it): of the commands, only ``runserver`` serves."""
    program = os.path.basename(sys.argv[0]) if sys.argv else ""
    return program in ("manage.py", "django-admin") and sys.argv[1:2] != ["runserver"]


def grpc_serve_here() -> grpc.Server | None:
    """Serve OTLP/gRPC from this (server) process where ``AGENTDASH_OTLP_GRPC`` says, unless it
    says ``off``; at most once per process. The ASGI application calls it as daphne loads it."""
    address = str(agentdash_setting("OTLP_GRPC")).strip()
    if not address or address.lower() in ("off", "none", "0", "false"):
        return None
    if "pytest" in sys.modules:
        return None  # a test imported the application to look at it: not the machine's port
    if _a_command_that_serves_nothing():
        return None
    if _served:
        return _served[0]
    server = grpc_server_start(address)
    if server is not None:
        _served.append(server)
    return server
