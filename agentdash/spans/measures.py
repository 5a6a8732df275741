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
    once, so each ended span is counted once). A batch's series are looked up once each and
    its tokens added once a series (a batch of ingest is hundreds of spans)."""
    durations: dict[tuple[str, str], list[float]] = {}
    tokens: dict[tuple[str, str], int] = {}
    stops: dict[str, int] = {}
    for version in versions:
        if version.end_time is None:
            continue
        kind = version.attributes.get(AgentDash.SPAN_KIND)
        source = "local" if version.source_id is None else "ingested"
        seconds = max(0, version.end_time - version.start_time) / 1e9
        durations.setdefault((kind if kind in KINDS else "other", source), []).append(seconds)
        for direction, column in TOKEN_COLUMNS:
            count = getattr(version, column)
            if count:
                tokens[(direction, source)] = tokens.get((direction, source), 0) + count
        if source == "local" and AgentDash.CODE_SANDBOX in version.attributes:
            stopped = version.attributes.get(AgentDash.CODE_STOPPED_BY) or "completed"
            stop = stopped if stopped in STOPS else "other"
            stops[stop] = stops.get(stop, 0) + 1
    for labels, values in durations.items():
        series = SPAN_SECONDS.labels(*labels)
        for seconds in values:
            series.observe(seconds)
    for labels, count in tokens.items():
        TOKENS.labels(*labels).inc(count)
    for stop, count in stops.items():
        SANDBOX_RUNS.labels(stop).inc(count)
