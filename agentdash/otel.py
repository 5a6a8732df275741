"""Stream an agent's spans to AgentDash as they start, not only when they end.

An OpenTelemetry ``BatchSpanProcessor`` exports a span once it has ended: a tool call of a
minute shows up after a minute. :class:`LiveBatchSpanProcessor` also exports each span when
it starts — a snapshot with no end time (OTLP ``endTimeUnixNano`` 0: "still running") — and
again when it ends, so AgentDash's timeline shows the step while it runs. ::

    from agentdash.otel import install
    install(endpoint="http://localhost:8000", key="agd_...")
    # or install() with AGENTDASH_URL and AGENTDASH_INGEST_KEY set

This module imports only the OpenTelemetry SDK and the official OTLP/HTTP exporter
(``opentelemetry-exporter-otlp-proto-http``): nothing of Django or the rest of AgentDash, so
an agent's app may install the project or copy this one file.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections import OrderedDict
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

logger = logging.getLogger(__name__)

URL_ENV = "AGENTDASH_URL"
KEY_ENV = "AGENTDASH_INGEST_KEY"
DEFAULT_URL = "http://localhost:8000"  # ``make run``
TRACES_PATH = "/v1/traces"
SHUTDOWN_TIMEOUT_MS = 5_000

_installed: weakref.WeakKeyDictionary[Any, LiveBatchSpanProcessor] = weakref.WeakKeyDictionary()


def started(span: ReadableSpan) -> ReadableSpan:
    """A snapshot of ``span`` as it starts: its identity, parent, kind, start time, resource,
    scope, links and the attributes it was started with; no end time, no events, status
    unset. The official encoder writes its ``end_time_unix_nano`` as 0."""
    return ReadableSpan(
        name=span.name,
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes=dict(span.attributes or {}),
        links=tuple(span.links),
        kind=span.kind,
        start_time=span.start_time,
        end_time=None,
        instrumentation_scope=span.instrumentation_scope,
    )


class LiveBatchSpanProcessor(SpanProcessor):
    """Exports every sampled span twice — a snapshot when it starts, the span when it ends —
    through ``exporter``, in batches, from a thread of its own.

    The agent's thread only puts an item in a bounded queue under a lock: it never waits for
    the exporter, and nothing the exporter does (a collector down, slow or refusing) reaches
    it. The queue holds one item per span: an end whose start is still waiting takes the
    start's place (a short step is sent once, ended). When the queue is full an item is
    dropped and counted (``dropped_starts``, ``dropped_ends``); starts are refused first —
    the last quarter of the queue is kept for ends, which a start without its end would leave
    "running". Batches go out ``schedule_delay_millis`` after the first item waits, or as
    soon as ``max_export_batch_size`` (default 512, at most the queue) wait; one export at a
    time, so a span's start is sent before its end. ``export_failures`` counts the batches
    the exporter failed (it logs why).
    """

    def __init__(
        self,
        exporter: SpanExporter,
        *,
        max_queue_size: int = 2048,
        max_export_batch_size: int | None = None,
        schedule_delay_millis: float = 100,
    ) -> None:
        if max_export_batch_size is None:
            max_export_batch_size = min(512, max_queue_size)
        if not 1 <= max_export_batch_size <= max_queue_size:
            raise ValueError("need 1 <= max_export_batch_size <= max_queue_size")
        self.exporter = exporter
        self.max_queue_size = max_queue_size
        self.max_export_batch_size = max_export_batch_size
        self.schedule_delay_s = schedule_delay_millis / 1000
        self.dropped_starts = 0
        self.dropped_ends = 0
        self.export_failures = 0
        self._start_limit = max_queue_size - max_queue_size // 4
        self._stopping = False
        self._reset()
        weak = weakref.WeakMethod(self._after_fork)
        os.register_at_fork(after_in_child=lambda: (after := weak()) and after())

    def _after_fork(self) -> None:
        # A forked child (a prefork worker) gets a fresh queue, lock and thread: the parent's
        # thread does not exist there and its lock may have been held at the fork.
        if not self._stopping:
            self._reset()

    def _reset(self) -> None:
        self._queue: OrderedDict[tuple[int, int], ReadableSpan] = OrderedDict()
        self._cond = threading.Condition()
        self._flush_asked = self._flush_done = 0
        self._thread = threading.Thread(target=self._work, name="agentdash-otel", daemon=True)
        self._thread.start()

    # ── The agent's side ────────────────────────────────────────────────────────────────────
    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        if span.context.trace_flags.sampled:
            self._put(span.context.trace_id, span.context.span_id, started(span), ended=False)

    def on_end(self, span: ReadableSpan) -> None:
        context = span.context
        if context is not None and context.trace_flags.sampled:
            self._put(context.trace_id, context.span_id, span, ended=True)

    def _put(self, trace_id: int, span_id: int, item: ReadableSpan, *, ended: bool) -> None:
        key = (trace_id, span_id)
        with self._cond:
            if self._stopping:
                return
            waiting = len(self._queue)
            if ended and key in self._queue:
                self._queue[key] = item  # its start was not sent yet: send only the end
                return
            if waiting >= (self.max_queue_size if ended else self._start_limit):
                if ended:
                    self.dropped_ends += 1
                else:
                    self.dropped_starts += 1
                return
            self._queue[key] = item
            if waiting == 0 or waiting + 1 >= self.max_export_batch_size:
                self._cond.notify()

    # ── The export thread ───────────────────────────────────────────────────────────────────
    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._stopping and not self._flush_wanted():
                    self._cond.wait()
                if not self._stopping and not self._flush_wanted() and not self._batch_full():
                    self._cond.wait(self.schedule_delay_s)  # let the step's spans gather
                flush, stopping = self._flush_asked, self._stopping
                batches = self._take_all()
            for batch in batches:
                self._export(batch)
            with self._cond:
                self._flush_done = flush
                self._cond.notify_all()
                if stopping and not self._queue:
                    return

    def _flush_wanted(self) -> bool:
        return self._flush_asked > self._flush_done

    def _batch_full(self) -> bool:
        return len(self._queue) >= self.max_export_batch_size

    def _take_all(self) -> list[list[ReadableSpan]]:
        items = list(self._queue.values())
        self._queue.clear()
        size = self.max_export_batch_size
        return [items[i : i + size] for i in range(0, len(items), size)]

    def _export(self, batch: list[ReadableSpan]) -> None:
        try:
            result = self.exporter.export(batch)
        except Exception:  # an exporter's bug must not end the thread
            logger.exception("exporting %d spans to AgentDash failed", len(batch))
            result = SpanExportResult.FAILURE
        if result is not SpanExportResult.SUCCESS:
            self.export_failures += 1

    # ── Flush and shutdown ──────────────────────────────────────────────────────────────────
    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Export everything waiting now; ``True`` once done (sent or failed), ``False`` if
        ``timeout_millis`` passed first."""
        with self._cond:
            if not self._thread.is_alive():
                return not self._queue
            self._flush_asked += 1
            wanted = self._flush_asked
            self._cond.notify_all()
            return self._cond.wait_for(
                lambda: self._flush_done >= wanted, timeout=timeout_millis / 1000
            )

    def shutdown(self) -> None:
        """Stop taking spans, export what waits (for up to ``SHUTDOWN_TIMEOUT_MS``), then shut
        the exporter down (which also ends a retry still in progress)."""
        with self._cond:
            if self._stopping:
                return
            self._stopping = True
            self._cond.notify_all()
        self._thread.join(SHUTDOWN_TIMEOUT_MS / 1000)
        self.exporter.shutdown()


def traces_url(endpoint: str) -> str:
    """``endpoint`` (AgentDash's address, or its ``/v1/traces`` already) as the URL spans are
    posted to."""
    base = endpoint.rstrip("/")
    return base if base.endswith(TRACES_PATH) else base + TRACES_PATH


def install(
    endpoint: str | None = None,
    key: str | None = None,
    *,
    provider: Any = None,
    **options: Any,
) -> LiveBatchSpanProcessor:
    """Stream the spans of ``provider`` (default: the global one) to AgentDash, at start and
    at end; returns the processor added.

    ``endpoint``: AgentDash's address (default ``$AGENTDASH_URL``, else
    ``http://localhost:8000``); spans are posted to its ``/v1/traces``. ``key``: an ingest key
    (default ``$AGENTDASH_INGEST_KEY``), sent as ``Authorization: Bearer <key>``; without one
    ``ValueError`` is raised. ``options`` go to :class:`LiveBatchSpanProcessor`.

    When the global provider is still the API's proxy, an SDK ``TracerProvider`` is made
    (resource from ``OTEL_SERVICE_NAME``/``OTEL_RESOURCE_ATTRIBUTES``) and set as the global
    one. A provider that takes no span processors raises ``TypeError``. A second call for the
    same provider returns the processor the first one added.

    The exporter is the official one: what is not given here it reads from the standard
    variables (``OTEL_EXPORTER_OTLP_TRACES_TIMEOUT``, ``_COMPRESSION``, ``_CERTIFICATE``…;
    exporter 1.45+ also adds the headers of ``OTEL_EXPORTER_OTLP_[TRACES_]HEADERS``).
    """
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    target = provider if provider is not None else _global_provider()
    if not callable(getattr(target, "add_span_processor", None)):
        raise TypeError(f"{target!r} takes no span processors: pass an SDK TracerProvider")
    if target in _installed:
        return _installed[target]
    key = key or os.environ.get(KEY_ENV, "")
    if not key:
        raise ValueError(f"no ingest key: pass key= or set {KEY_ENV}")
    url = traces_url(endpoint or os.environ.get(URL_ENV) or DEFAULT_URL)
    exporter = OTLPSpanExporter(endpoint=url, headers={"Authorization": f"Bearer {key}"})
    processor = LiveBatchSpanProcessor(exporter, **options)
    target.add_span_processor(processor)
    _installed[target] = processor
    return processor


def _global_provider() -> Any:
    current = trace.get_tracer_provider()
    if isinstance(current, trace.ProxyTracerProvider):
        trace.set_tracer_provider(TracerProvider())  # a no-op (logged) if another won a race
        current = trace.get_tracer_provider()
    return current
