"""The service's own metrics, for Prometheus (served at ``/metrics`` by ``agentdash.monitor``):
what each process counts as it works, with the official client. Every app increments them
where the thing happens; none reads them back.

In one process (the embedded default) they live in its memory. With several processes on a
host (daphne processes, Celery workers), set ``PROMETHEUS_MULTIPROC_DIR`` to a directory they
share (empty at start): the client keeps each process's values in files there and
``/metrics`` sums them (``prometheus_client``'s multiprocess mode; ``SOCKETS_OPEN`` counts the
live processes' sockets).
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
           300.0, 900.0)  # fmt: skip
"""Histogram buckets of durations: a tool's few milliseconds to a run's quarter hour."""

INGEST_SPANS = Counter(
    "agentdash_ingest_spans", "Spans OTLP ingest stored, by transport.", ["transport"]
)
INGEST_EXPORTS_READ = Counter(
    "agentdash_ingest_exports_read",
    "Trace exports read (parsed, unpacked, made storable), by where: in a decoding process "
    "('decoder'), split between one and the server ('split'), or in the server ('server').",
    ["where"],
)
INGEST_LOG_RECORDS = Counter(
    "agentdash_ingest_log_records",
    "Log records OTLP ingest kept (as their spans' events), by transport.",
    ["transport"],
)
INGEST_REJECTED = Counter(
    "agentdash_ingest_rejected",
    "Spans or log records rejected within exports that were taken (partial success).",
    ["transport", "signal"],
)
INGEST_REFUSALS = Counter(
    "agentdash_ingest_refusals",
    "OTLP exports refused whole, by the HTTP status they were (or, over gRPC, would be) "
    "answered with: 400 malformed, 401 key, 413 size, 415 type, 429 rate, 503 database.",
    ["transport", "status"],
)
SPAN_SECONDS = Histogram(
    "agentdash_span_duration_seconds",
    "Durations of spans as they are stored ended, by kind (run, agent, model, tool, "
    "callback; 'other' for spans of no kind) and source (local, ingested).",
    ["kind", "source"],
    buckets=SECONDS,
)
TOKENS = Counter(
    "agentdash_tokens",
    "Tokens of the model calls stored ended, by direction (input, output, cached, thinking) "
    "and source (local, ingested).",
    ["direction", "source"],
)
SANDBOX_RUNS = Counter(
    "agentdash_sandbox_runs",
    "Code runs of the sandbox, by what stopped them ('completed': nothing did).",
    ["stopped_by"],
)
FLUSH_SECONDS = Histogram(
    "agentdash_live_flush_seconds",
    "How long one flush of the live pipeline took to store its spans and publish them.",
    buckets=SECONDS,
)
SOCKETS_OPEN = Gauge(
    "agentdash_sockets_open",
    "Session websockets open now (accepted, allowed to see their session).",
    multiprocess_mode="livesum",
)
