"""A local stand-in for an OTLP/HTTP collector: ``http.server`` on a free port, in a thread.

It reads every ``POST`` as the official exporters send it (binary protobuf, gzip or not) into
the official ``ExportTraceServiceRequest`` and answers 200 with an empty
``ExportTraceServiceResponse``. ``hold()`` makes it keep each request unanswered until
``release()`` (a collector that hangs); every request that arrived is counted meanwhile.
"""

from __future__ import annotations

import gzip
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

WAIT_S = 60.0  # bounds a wait; measures nothing


@dataclass(frozen=True)
class Received:
    """One request: its path, headers (lower-case names) and message."""

    path: str
    headers: dict[str, str]
    message: ExportTraceServiceRequest


def value(any_value: AnyValue) -> Any:
    """An OTLP attribute value as Python (scalars and arrays of scalars)."""
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


def attributes(span: Span) -> dict[str, Any]:
    return {a.key: value(a.value) for a in span.attributes}


class Collector:
    """``with Collector() as collector:`` — ``collector.url`` is its base URL."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self.arrived = 0  # requests that reached the handler, answered or held
        self._cond = threading.Condition()
        self._open = threading.Event()
        self._open.set()
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                with collector._cond:
                    collector.arrived += 1
                    collector._cond.notify_all()
                collector._open.wait(WAIT_S)
                message = ExportTraceServiceRequest.FromString(body)
                headers = {k.lower(): v for k, v in self.headers.items()}
                with collector._cond:
                    collector.received.append(Received(self.path, headers, message))
                    collector._cond.notify_all()
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> Collector:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
        self._server.shutdown()
        self._server.server_close()

    def hold(self) -> None:
        """Keep requests unanswered from now on."""
        self._open.clear()

    def release(self) -> None:
        self._open.set()

    def spans(self) -> list[tuple[Span, dict[str, Any]]]:
        """Every span received, in order, with its resource's attributes."""
        with self._cond:
            received = list(self.received)
        return [
            (span, {a.key: value(a.value) for a in resource.resource.attributes})
            for r in received
            for resource in r.message.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]

    def wait_for(self, check: Any, what: str) -> Any:
        """Wait (up to ``WAIT_S``) until ``check(self)`` is truthy; return it."""
        with self._cond:
            found = self._cond.wait_for(lambda: check(self), timeout=WAIT_S)
        if not found:
            raise AssertionError(f"the collector gave up waiting for {what}")
        return found
