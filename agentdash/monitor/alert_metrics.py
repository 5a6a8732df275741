"""What an alert rule can read: each metric's name, words, unit and how it is read from the
Monitor's totals over the rule's window (``stats.stats_totals``: the same numbers the page
and ``/monitor/stats.json`` show), or from what waits now."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from agentdash.monitor.models import AlertRule
from agentdash.monitor.stats import StatsQuery, stats_sessions, stats_totals
from agentdash.remote.selectors import oldest_pause_asked
from agentdash.runs.selectors import oldest_wait_started

Totals = dict[str, Any]


@dataclass(frozen=True)
class AlertMetric:
    name: str
    label: str
    unit: str
    read: Callable[[Totals], float | None] | None = None  # None: read from what waits now


def _p95(key: str) -> Callable[[Totals], float | None]:
    def read(totals: Totals) -> float | None:
        found = totals[key]["p95"]
        return None if found is None else float(found)

    return read


def _rate(totals: Totals) -> float | None:
    rate = totals["error_rate"]
    return None if rate is None else round(100 * rate, 4)


METRICS: dict[str, AlertMetric] = {
    m.name: m
    for m in (
        AlertMetric("error_rate", "error rate of the runs that ended", "%", _rate),
        AlertMetric(
            "runs_failed", "failed runs", "runs", lambda t: t["runs_by_status"].get("failed", 0)
        ),
        AlertMetric("runs", "runs started", "runs", lambda t: t["runs"]),
        AlertMetric("run_p95_s", "run duration, p95", "s", _p95("run_seconds")),
        AlertMetric("model_p95_s", "model-call latency, p95", "s", _p95("model_seconds")),
        AlertMetric(
            "first_token_p95_s",
            "time to first token of streamed calls, p95",
            "s",
            _p95("first_token_seconds"),
        ),
        AlertMetric("tool_p95_s", "tool-call latency, p95", "s", _p95("tool_seconds")),
        AlertMetric("model_errors", "failed model calls", "calls", lambda t: t["model_errors"]),
        AlertMetric("tool_errors", "failed tool calls", "calls", lambda t: t["tool_errors"]),
        AlertMetric("cost_usd", "cost of the model calls", "$", lambda t: t["cost_usd"]),
        AlertMetric(
            "tokens",
            "tokens (input + output)",
            "tokens",
            lambda t: t["tokens_in"] + t["tokens_out"],
        ),
        AlertMetric("waiting_minutes", "longest wait for a person's answer, now", "min"),
    )
}


def metric_choices() -> list[tuple[str, str]]:
    return [(m.name, f"{m.label} ({m.unit})") for m in METRICS.values()]


def rule_query(rule: AlertRule, *, now: datetime) -> StatsQuery:
    """The Monitor query of ``rule``'s window ending ``now``, with its filters."""
    return StatsQuery(
        start=now - timedelta(seconds=rule.window_s), end=now, step_s=rule.window_s,
        agent=rule.agent, model=rule.model, tool=rule.tool, source=rule.source,
        owner=rule.owner,
    )  # fmt: skip


def metric_value(rule: AlertRule, *, now: datetime) -> float | None:
    """``rule``'s metric now (``None``: nothing to read — no run ended, none waits)."""
    metric = METRICS[rule.metric]
    query = rule_query(rule, now=now)
    if metric.read is not None:
        found = metric.read(stats_totals(query))
        return None if found is None else float(found)
    sessions = stats_sessions(query)
    since = [
        t
        for t in (oldest_wait_started(sessions=sessions), oldest_pause_asked(sessions=sessions))
        if t is not None
    ]
    if not since:
        return None
    return round(max(0.0, (now - min(since)).total_seconds() / 60), 3)


def breached(rule: AlertRule, value: float | None) -> bool:
    """Whether ``value`` crosses ``rule``'s threshold (no value crosses nothing)."""
    if value is None:
        return False
    if rule.comparison == AlertRule.Comparison.BELOW:
        return value < rule.threshold
    return value > rule.threshold
