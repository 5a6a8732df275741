"""OTLP out as a collector: the exports OTLP ingest took, passed on to the collector AgentDash
copies its own spans to (``spans.otlp_out``: ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or
``OTEL_EXPORTER_OTLP_ENDPOINT``, ``..._HEADERS``, ``..._TIMEOUT``), when
``AGENTDASH_OTLP_OUT_INGESTED`` is on. Off by default.

Each taken request goes on as the sender sent it — its resources, scopes, spans and every
attribute, none of what AgentDash adds — as one OTLP/HTTP protobuf ``POST``, from a thread of
its own: ingest only puts it on a bounded queue (``MAX_WAITING`` requests), so a collector
that is down or slow never slows a sender. A request the collector refuses for a while
(connection errors, 429, 502–504) is tried again up to ``ATTEMPTS`` times, ``RETRY_S``
apart, doubling; past that, or with the queue full, it is dropped, counted and logged (at
most once a minute)."""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping

from agentdash.core.conf import agentdash_setting
from agentdash.spans.otlp_out import otlp_out_plan

logger = logging.getLogger(__name__)

MAX_WAITING = 256
ATTEMPTS = 4
RETRY_S = 0.5
_RETRIED = {429, 502, 503, 504}


class Forwarder:
    """One process's queue of requests to pass on, and the thread that sends them."""

    def __init__(self) -> None:
        self.waiting: queue.Queue[bytes] = queue.Queue(MAX_WAITING)
        self.sent = 0
        self.dropped = 0
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._said_at = 0.0

    def put(self, body: bytes) -> bool:
        """Queue ``body`` (a serialized ``ExportTraceServiceRequest``); ``False``: dropped."""
        self._start()
        try:
            self.waiting.put_nowait(body)
        except queue.Full:
            self._drop("the queue is full (the collector is slower than the senders)")
            return False
        return True

    def _start(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="agentdash-otlp-forward", daemon=True
                )
                self._thread.start()

    def _run(self) -> None:
        while True:
            body = self.waiting.get()
            try:
                self._send(body)
            except Exception:  # a bug here must not end the thread
                logger.exception("OTLP out: passing on an ingested export failed")
            finally:
                self.waiting.task_done()

    def _send(self, body: bytes) -> None:
        target = forward_target(os.environ)
        if target is None:
            self._drop("no collector is named (OTEL_EXPORTER_OTLP_ENDPOINT)")
            return
        url, headers, timeout = target
        delay = RETRY_S
        for attempt in range(1, ATTEMPTS + 1):
            request = urllib.request.Request(url, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=timeout) as answer:
                    answer.read()
                self.sent += 1
                return
            except urllib.error.HTTPError as exc:
                if exc.code not in _RETRIED:
                    self._drop(f"the collector answered {exc.code}")
                    return
                why = f"the collector answered {exc.code}"
            except (urllib.error.URLError, OSError) as exc:
                why = f"the collector cannot be reached ({exc})"
            if attempt < ATTEMPTS:
                time.sleep(delay)
                delay *= 2
        self._drop(f"{why}, {ATTEMPTS} times")

    def _drop(self, why: str) -> None:
        self.dropped += 1
        now = time.monotonic()
        if now - self._said_at >= 60:
            self._said_at = now
            logger.warning("OTLP out: an ingested export was not passed on: %s", why)

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until every queued request was sent or dropped (tests, shutdown)."""
        deadline = time.monotonic() + timeout
        while self.waiting.unfinished_tasks:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True


forwarder = Forwarder()


def forward_ingested(protobuf: Callable[[], bytes]) -> bool:
    """Pass an export on (``protobuf()``: its protobuf encoding, asked for only then) when
    ``AGENTDASH_OTLP_OUT_INGESTED`` is on and a collector is named; whether it was queued."""
    if not agentdash_setting("OTLP_OUT_INGESTED") or not otlp_out_plan(os.environ).export:
        return False
    return forwarder.put(protobuf())


def forward_target(environ: Mapping[str, str]) -> tuple[str, dict[str, str], float] | None:
    """The collector's traces URL, the headers to send and the timeout in seconds, as the
    OTLP exporter reads the standard variables; ``None`` when none is named."""
    url = environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    if not url:
        base = environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
        if not base:
            return None
        url = f"{base.rstrip('/')}/v1/traces"
    headers = {"Content-Type": "application/x-protobuf"}
    raw = environ.get("OTEL_EXPORTER_OTLP_TRACES_HEADERS") or environ.get(
        "OTEL_EXPORTER_OTLP_HEADERS", ""
    )
    for pair in raw.split(","):
        name, found, value = pair.partition("=")
        if found and name.strip():
            headers[urllib.parse.unquote(name.strip())] = urllib.parse.unquote(value.strip())
    timeout_raw = environ.get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") or environ.get(
        "OTEL_EXPORTER_OTLP_TIMEOUT", ""
    )
    try:
        timeout = float(timeout_raw) / 1000 if timeout_raw.strip() else 10.0
    except ValueError:
        timeout = 10.0
    return url, headers, max(timeout, 0.1)
