"""What the span store tells Prometheus (``agentdash.core.metrics``) of each span it stores
ended: its duration by kind and source, a model call's tokens, a sandboxed code run's stop.
Labels take known values only (a sender's own kind or stop is ``other``): no sender can grow
the number of series."""

from __future__ import annotations

from collections.abc import Iterable

from agentdash.core.metrics import SANDBOX_RUNS, SPAN_SECONDS, TOKENS
from agentdash.spans.span_version import SpanVersion
from runtime.code_executors.sandbox.limits import STOPS
from runtime.telemetry.attributes import AgentDash, StepKind

KINDS = frozenset(StepKind.ALL)
TOKEN_COLUMNS = (
    ("input", "tokens_in"),
    ("output", "tokens_out"),
    ("cached", "tokens_cached"),
    ("thinking", "tokens_thinking"),
)


def spans_measured(versions: Iterable[SpanVersion]) -> None:
    """Count these stored versions (those that ended; each span's final version is stored
    once, so each ended span is counted once)."""
    for version in versions:
        if version.end_time is None:
            continue
        kind = version.attributes.get(AgentDash.SPAN_KIND)
        source = "local" if version.source_id is None else "ingested"
        seconds = max(0, version.end_time - version.start_time) / 1e9
        SPAN_SECONDS.labels(kind if kind in KINDS else "other", source).observe(seconds)
        for direction, column in TOKEN_COLUMNS:
            count = getattr(version, column)
            if count:
                TOKENS.labels(direction, source).inc(count)
        if source == "local" and AgentDash.CODE_SANDBOX in version.attributes:
            stopped = version.attributes.get(AgentDash.CODE_STOPPED_BY) or "completed"
            SANDBOX_RUNS.labels(stopped if stopped in STOPS else "other").inc()
