"""The agents' numbers over a time range, in buckets: runs and their outcomes, the error rate,
run and model-call latency (p50, p95, p99), tokens and their cost, tool calls and tool
errors — for the sessions a person may see (operators: every one), narrowed by filters. The
same numbers for the JSON endpoint (``views.stats_json``), ``manage.py stats`` and the alert
rules (``alerts``).

Read from the runs and spans themselves (``runs.selectors.runs_between``,
``spans.selectors.step_spans_between``): exact, and fine for the ranges a person asks about
day to day; the Monitor page's rollups, kept as spans are stored, are to come for ranges over
millions of spans (docs/MONITOR.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import QuerySet

from agentdash.agent_sessions.models import EXTERNAL_SESSION_PREFIX, AgentSession
from agentdash.agent_sessions.selectors import session_list_for_user
from agentdash.runs.selectors import RUN_STATUSES, RunRow, runs_between
from agentdash.spans.selectors import StepSpan, step_spans_between

RANGES = {"1h": 3600, "6h": 6 * 3600, "24h": 86400, "7d": 7 * 86400, "30d": 30 * 86400,
          "90d": 90 * 86400}  # fmt: skip
STEPS = (60, 300, 900, 3600, 6 * 3600, 86400)
MAX_BUCKETS = 400
MAX_DAYS = 366
EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
FILTERS = ("agent", "model", "tool", "source", "status", "owner")
PARAMS = frozenset({"range", "from", "to", *FILTERS})
SOURCES = ("local", "ingested")
MAX_FILTER_CHARS = 255


@dataclass(frozen=True)
class StatsQuery:
    start: datetime
    end: datetime
    step_s: int
    agent: str = ""
    model: str = ""
    tool: str = ""
    source: str = ""
    status: str = ""
    owner: str = ""


def stats_query(params: Mapping[str, str], *, now: datetime | None = None) -> StatsQuery:
    """The query ``params`` ask for (``range`` 1h…90d, or ``from``/``to`` in ISO 8601 with
    their offset, and the filters); ``ValidationError`` naming each field that is wrong."""
    now = now or datetime.now(UTC)
    errors: dict[str, list[str]] = {}
    unknown = sorted(set(params) - PARAMS)
    if unknown:
        errors["filters"] = [
            f"unknown: {', '.join(unknown)[:200]} (use {', '.join(sorted(PARAMS))})"
        ]
    start, end = _range(params, now, errors)
    filters = {name: str(params.get(name, "")).strip() for name in FILTERS}
    for name, value in filters.items():
        if len(value) > MAX_FILTER_CHARS or "\x00" in value:
            errors[name] = [f"at most {MAX_FILTER_CHARS} characters, no NUL"]
    if filters["source"] not in ("", *SOURCES):
        errors["source"] = [f"one of {', '.join(SOURCES)}"]
    if filters["status"] not in ("", *RUN_STATUSES):
        errors["status"] = [f"one of {', '.join(RUN_STATUSES)}"]
    if errors:
        raise ValidationError(errors)
    seconds = (end - start).total_seconds()
    step = next((s for s in STEPS if seconds / s <= MAX_BUCKETS), STEPS[-1])
    return StatsQuery(start=start, end=end, step_s=step, **filters)


def _range(
    params: Mapping[str, str], now: datetime, errors: dict[str, list[str]]
) -> tuple[datetime, datetime]:
    if "from" not in params and "to" not in params:
        name = params.get("range", "24h")
        if name not in RANGES:
            errors["range"] = [f"one of {', '.join(RANGES)}, or from and to"]
            name = "24h"
        return now - timedelta(seconds=RANGES[name]), now
    found = []
    for field in ("from", "to"):
        try:
            moment = datetime.fromisoformat(str(params.get(field, "")))
        except ValueError:
            errors[field] = ["an ISO 8601 time with its offset, e.g. 2026-11-28T09:00:00+01:00"]
            found.append(now)
            continue
        if moment.tzinfo is None:
            errors[field] = ["give its offset (Z or +01:00): times are read in no zone of ours"]
        found.append(moment if moment.tzinfo else moment.replace(tzinfo=UTC))
    start, end = found
    if not errors:
        if end <= start:
            errors["to"] = ["the range ends before it starts"]
        elif end - start > timedelta(days=MAX_DAYS):
            errors["from"] = [f"a range of at most {MAX_DAYS} days"]
        elif start < EARLIEST or end > now + timedelta(days=1):
            errors["from"] = ["a range between 2000 and tomorrow"]
    return start, end


def stats(query: StatsQuery, *, viewer: Any) -> dict[str, Any]:
    """The numbers of ``query`` for ``viewer`` (JSON-ready)."""
    runs, steps = _rows(query, viewer)
    return {
        "range": {
            "from": query.start.isoformat(),
            "to": query.end.isoformat(),
            "step_s": query.step_s,
        },
        "filters": {k: v for k, v in asdict(query).items() if k in FILTERS and v},
        "totals": _numbers(runs, steps),
        "series": _series(query, runs, steps),
        "tools": _by_name(steps, "tool"),
        "models": _by_name(steps, "model"),
    }


def stats_totals(query: StatsQuery, *, viewer: Any = None) -> dict[str, Any]:
    """The totals of ``query`` alone (``viewer`` ``None``: every session) — what an alert
    rule reads of its window."""
    return _numbers(*_rows(query, viewer))


def stats_sessions(query: StatsQuery, *, viewer: Any = None) -> QuerySet[AgentSession]:
    """The sessions ``query``'s filters keep of those ``viewer`` may see (``None``: all)."""
    if viewer is None:
        sessions = AgentSession.objects.order_by()
    else:
        sessions = session_list_for_user(user=viewer).order_by()
    if query.agent:
        sessions = sessions.filter(app_name=query.agent)
    if query.owner:
        sessions = sessions.filter(owner__username=query.owner)
    if query.source:
        external = sessions.filter(pk__startswith=EXTERNAL_SESSION_PREFIX)
        sessions = external if query.source == "ingested" else sessions.exclude(pk__in=external)
    return sessions


def _rows(query: StatsQuery, viewer: Any) -> tuple[list[RunRow], list[StepSpan]]:
    sessions = stats_sessions(query, viewer=viewer)
    runs = [
        r for r in runs_between(start=query.start, end=query.end, sessions=sessions)
        if not query.status or r.status == query.status
    ]  # fmt: skip
    steps = [
        s
        for s in step_spans_between(
            start_ns=_ns(query.start),
            end_ns=_ns(query.end),
            kinds=("model", "tool"),
            sessions=sessions,
        )
        if (s.kind != "model" or not query.model or s.name == query.model)
        and (s.kind != "tool" or not query.tool or s.name == query.tool)
    ]
    return runs, steps


def _ns(moment: datetime) -> int:
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000


def _series(query: StatsQuery, runs: list[RunRow], steps: list[StepSpan]) -> list[dict[str, Any]]:
    step = query.step_s
    first = math.floor(query.start.timestamp() / step) * step
    count = math.ceil((query.end.timestamp() - first) / step)
    run_buckets: list[list[RunRow]] = [[] for _ in range(count)]
    step_buckets: list[list[StepSpan]] = [[] for _ in range(count)]
    for run in runs:
        run_buckets[min(count - 1, int((run.created_at.timestamp() - first) // step))].append(run)
    for span in steps:
        index = int((span.start_time / 1e9 - first) // step)
        step_buckets[min(count - 1, max(0, index))].append(span)
    return [
        {
            "t": datetime.fromtimestamp(first + i * step, tz=UTC).isoformat(),
            **_numbers(run_buckets[i], step_buckets[i]),
        }
        for i in range(count)
    ]


def _numbers(runs: list[RunRow], steps: list[StepSpan]) -> dict[str, Any]:
    ended = [r for r in runs if r.status in ("succeeded", "failed", "cancelled")]
    failed = sum(1 for r in runs if r.status == "failed")
    models = [s for s in steps if s.kind == "model"]
    tools = [s for s in steps if s.kind == "tool"]
    by_status: dict[str, int] = {}
    for run in runs:
        by_status[run.status] = by_status.get(run.status, 0) + 1
    return {
        "runs": len(runs),
        "runs_by_status": by_status,
        "error_rate": round(failed / len(ended), 4) if ended else None,
        "run_seconds": _percentiles([r.seconds for r in runs if r.seconds is not None]),
        "model_calls": len(models),
        "model_errors": sum(1 for s in models if s.error),
        "model_seconds": _percentiles([s.seconds for s in models]),
        "tokens_in": sum(s.tokens_in for s in models),
        "tokens_out": sum(s.tokens_out for s in models),
        "tokens_cached": sum(s.tokens_cached for s in models),
        "tokens_thinking": sum(s.tokens_thinking for s in models),
        "cost_usd": _cost(models),
        "unpriced_calls": sum(
            1 for s in models if s.cost_usd is None and s.tokens_in + s.tokens_out
        ),
        "tool_calls": len(tools),
        "tool_errors": sum(1 for s in tools if s.error),
        "tool_seconds": _percentiles([s.seconds for s in tools]),
    }


def _cost(models: list[StepSpan]) -> float:
    """US dollars of the priced model calls (rounded to a millionth of a cent)."""
    return round(sum(s.cost_usd for s in models if s.cost_usd is not None), 8)


def _percentiles(values: list[float]) -> dict[str, float | None]:
    """p50, p95, p99 by nearest rank (``None`` with no value)."""
    ordered = sorted(values)
    found: dict[str, float | None] = {}
    for name, q in (("p50", 0.50), ("p95", 0.95), ("p99", 0.99)):
        if not ordered:
            found[name] = None
            continue
        found[name] = round(ordered[max(0, math.ceil(q * len(ordered)) - 1)], 6)
    return found


def _by_name(steps: list[StepSpan], kind: str) -> list[dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for span in steps:
        if span.kind != kind:
            continue
        name = span.name or "(unnamed)"
        empty = {"name": name, "calls": 0, "errors": 0, "tokens_in": 0, "tokens_out": 0}
        row = found.setdefault(name, empty)
        row["calls"] += 1
        row["errors"] += int(span.error)
        row["tokens_in"] += span.tokens_in
        row["tokens_out"] += span.tokens_out
        if kind == "model":
            row["cost_usd"] = round(row.get("cost_usd", 0.0) + (span.cost_usd or 0.0), 8)
    return sorted(found.values(), key=lambda r: (-r["calls"], r["name"]))
