"""The agents' numbers over a time range, in buckets: runs and their outcomes, the error rate,
run, model-call and tool latency (p50, p95, p99; streamed calls' time to the first token),
tokens and their cost, tool calls and tool errors, guardrail decisions, confirmations and how
long they waited — for the sessions a person may see (operators: every one), narrowed by
filters. The same numbers for the JSON endpoint (``views.stats_json``), ``manage.py stats``
and the alert rules (``alerts``).

Runs are read from their table (``runs.selectors.runs_between``: exact); model and tool
calls from the step rollups the span store keeps (``spans.rollups``), or for one person's
sessions from their spans (``spans.step_reads``): counts and tokens exact, latency
percentiles from duration bins, within 12.3 %; waits for a person from their tables
(``runs.waits``, the remote apps' pauses), a wait in the bucket it was asked in. A range is
read in whole buckets: from the start of its first (docs/MONITOR.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.core.exceptions import ValidationError
from django.db.models import QuerySet

from agentdash.agent_sessions.models import EXTERNAL_SESSION_PREFIX, AgentSession
from agentdash.agent_sessions.selectors import session_list_for_user
from agentdash.core.permissions import is_operator
from agentdash.monitor.step_numbers import (
    BucketSteps,
    by_name,
    step_numbers,
    steps_by_bucket,
    steps_total,
)
from agentdash.remote.selectors import pauses_between
from agentdash.runs.selectors import RUN_STATUSES, RunRow, runs_between
from agentdash.runs.waits import WaitRow, waits_between
from agentdash.scores.selectors import score_share, scores_between
from agentdash.spans.step_reads import (
    StepRead,
    decisions_read,
    sessions_with_instruction,
    steps_read,
    steps_read_spans,
)

RANGES = {"1h": 3600, "6h": 6 * 3600, "24h": 86400, "7d": 7 * 86400, "30d": 30 * 86400,
          "90d": 90 * 86400}  # fmt: skip
STEPS = (300, 900, 3600, 6 * 3600, 86400)  # each a multiple of a rollup period
MAX_BUCKETS = 200
MAX_DAYS = 366
EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
FILTERS = ("agent", "model", "tool", "source", "status", "owner", "instruction")
PARAMS = frozenset({"range", "from", "to", "tz", *FILTERS})
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
    instruction: str = ""  # "<agent> <version>": sessions whose model calls had it


def stats_query(params: Mapping[str, str], *, now: datetime | None = None) -> StatsQuery:
    """The query ``params`` ask for (``range`` 1h…90d, or ``from``/``to`` in ISO 8601 with
    their offset — or without, read in the IANA time zone ``tz`` —, and the filters);
    ``ValidationError`` naming each field that is wrong."""
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
    if filters["instruction"] and " " not in filters["instruction"]:
        errors["instruction"] = ["an agent and a version, as compare shows them: analyst v2"]
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
    zone = _zone(str(params.get("tz", "")), errors)
    found = []
    for field in ("from", "to"):
        try:
            moment = datetime.fromisoformat(str(params.get(field, "")))
        except ValueError:
            errors[field] = ["an ISO 8601 time with its offset, e.g. 2026-11-28T09:00:00+01:00"]
            found.append(now)
            continue
        if moment.tzinfo is None and zone is not None:
            moment = moment.replace(tzinfo=zone)
        elif moment.tzinfo is None and "tz" not in errors:
            errors[field] = ["give its offset (Z or +01:00), or the time zone (tz): times "
                             "are read in no zone of ours"]  # fmt: skip
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


def _zone(name: str, errors: dict[str, list[str]]) -> ZoneInfo | None:
    """The IANA time zone ``name`` (``None`` for none given)."""
    if not name.strip():
        return None
    try:
        if len(name) > 64 or "\x00" in name or name.startswith(("/", ".")):
            raise ValueError(name)
        return ZoneInfo(name.strip())
    except (ValueError, ZoneInfoNotFoundError):
        errors["tz"] = ["an IANA time zone, e.g. Europe/Paris"]
        return None


def stats(query: StatsQuery, *, viewer: Any) -> dict[str, Any]:
    """The numbers of ``query`` for ``viewer`` (JSON-ready)."""
    first = _first(query)
    runs = _runs(query, viewer, first)
    read = _steps(query, viewer, first, step_s=query.step_s)
    steps = steps_by_bucket(read)
    decided: dict[int, dict[str, int]] = {}
    by_guardrail: dict[tuple[str, str], int] = {}
    for (at, guardrail, decision), n in _decisions(query, viewer, first).items():
        bucket = decided.setdefault(at, {})
        bucket[decision] = bucket.get(decision, 0) + n
        by_guardrail[(guardrail, decision)] = by_guardrail.get((guardrail, decision), 0) + n
    count = math.ceil((query.end.timestamp() - first) / query.step_s)
    statuses, durations = _bucketed(runs, first, query.step_s, count)
    outcomes, waited = _bucketed(
        (
            (asked.timestamp(), outcome or "waiting",
             None if answered is None else max(0.0, (answered - asked).total_seconds()))
            for asked, answered, outcome, _ in _waits(query, viewer, first)
        ),
        first, query.step_s, count,
    )  # fmt: skip
    scored = _scores(query, viewer, first, count)
    series = []
    for i in range(count):
        at = first + i * query.step_s
        series.append({
            "t": datetime.fromtimestamp(at, tz=UTC).isoformat(),
            **_run_numbers(statuses[i], durations[i]),
            **step_numbers(steps.get(at) or BucketSteps()),
            "decisions": decided.get(at, {}),
            "confirmations": outcomes[i],
            "wait_seconds": _percentiles(waited[i]),
            "scores": scored.buckets[i],
        })  # fmt: skip
    return {
        "range": {
            "from": datetime.fromtimestamp(first, tz=UTC).isoformat(),
            "to": query.end.isoformat(),
            "step_s": query.step_s,
        },
        "filters": {k: v for k, v in asdict(query).items() if k in FILTERS and v},
        "totals": {
            **_run_numbers(_summed(statuses), [d for found in durations for d in found]),
            **step_numbers(steps_total(steps.values())),
            "decisions": _summed(decided.values()),
            "confirmations": _summed(outcomes),
            "wait_seconds": _percentiles([w for found in waited for w in found]),
            "scores": scored.total,
        },
        "score_names": scored.names,
        "series": series,
        "guardrails": [
            {"guardrail": g or "(unnamed)", "decision": d, "count": n}
            for (g, d), n in sorted(by_guardrail.items(), key=lambda i: (-i[1], i[0]))
        ],
        "tools": by_name(read, "tool"),
        "models": by_name(read, "model"),
    }


SCORE_CHARTS = 6
"""The most score names charted (the most given first)."""


@dataclass
class _Scored:
    """Scores per bucket and in all, by name: ``count``, ``mean`` (the stored value: a
    category's index) and ``share`` (of the best, 0–1: yes/no and numbers; ``None`` for a
    category), and ``labels`` (yes/no, categories: how many of each)."""

    buckets: list[dict[str, dict[str, Any]]]
    total: dict[str, dict[str, Any]]
    names: list[str]


def _scores(query: StatsQuery, viewer: Any, first: int, count: int) -> _Scored:
    start = datetime.fromtimestamp(first, tz=UTC)
    rows = scores_between(start=start, end=query.end, sessions=_narrowed(query, viewer))
    sums: list[dict[str, list[Any]]] = [{} for _ in range(count)]
    total: dict[str, list[Any]] = {}
    last = count - 1
    for at, name, kind, value, label, low, high in rows:
        index = min(last, max(0, int((at - first) // query.step_s)))
        share = score_share(kind, value, low, high)
        for into in (sums[index], total):
            found = into.setdefault(name, [0, 0.0, 0.0, 0, {}])
            found[0] += 1
            found[1] += value
            if share is not None:
                found[2] += share
                found[3] += 1
            if label:
                found[4][label] = found[4].get(label, 0) + 1
    names = sorted(total, key=lambda n: (-total[n][0], n))[:SCORE_CHARTS]
    return _Scored([{n: _score_numbers(f) for n, f in b.items()} for b in sums],
                   {n: _score_numbers(f) for n, f in total.items()}, names)  # fmt: skip


def _score_numbers(found: list[Any]) -> dict[str, Any]:
    n, value, share, shared, labels = found
    return {"count": n, "mean": round(value / n, 4),
            "share": round(share / shared, 4) if shared else None, "labels": labels}  # fmt: skip


def _bucketed(
    rows: Iterable[tuple[float, str, float | None]], first: int, step: int, count: int
) -> tuple[list[dict[str, int]], list[list[float]]]:
    """Rows of (unix time, name, seconds or ``None``) — runs by status, waits by outcome —
    as each bucket's count by name and its seconds, in one pass (a hundred thousand runs
    for 90 days)."""
    counts: list[dict[str, int]] = [{} for _ in range(count)]
    seconds: list[list[float]] = [[] for _ in range(count)]
    last = count - 1
    for at, name, took in rows:
        index = min(last, max(0, int((at - first) // step)))
        found = counts[index]
        found[name] = found.get(name, 0) + 1
        if took is not None:
            seconds[index].append(took)
    return counts, seconds


def stats_totals(query: StatsQuery, *, viewer: Any = None) -> dict[str, Any]:
    """The totals of ``query`` alone (``viewer`` ``None``: every session) — what an alert
    rule reads of its window: its runs from its start; its calls from its start too for a
    window of an hour at most (read from the spans), else from the five minutes (the hour,
    for a window over two days) it starts in."""
    seconds = (query.end - query.start).total_seconds()
    exact = seconds <= 3600
    step = 60 if exact else 300 if seconds <= 2 * 86400 else 3600
    first = int(query.start.timestamp()) if exact else int(query.start.timestamp()) // step * step
    runs = _runs(query, viewer, query.start.timestamp())
    statuses: dict[str, int] = {}
    for _, status, _ in runs:
        statuses[status] = statuses.get(status, 0) + 1
    steps = steps_by_bucket(_steps(query, viewer, first, step_s=step, exact=exact))
    numbers = _run_numbers(statuses, [r[2] for r in runs if r[2] is not None])
    return {**numbers, **step_numbers(steps_total(steps.values()))}


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
    if query.instruction:
        agent, version = query.instruction.rsplit(" ", 1)
        sessions = sessions.filter(pk__in=sessions_with_instruction(agent=agent, version=version))
    if query.source:
        external = sessions.filter(pk__startswith=EXTERNAL_SESSION_PREFIX)
        sessions = external if query.source == "ingested" else sessions.exclude(pk__in=external)
    return sessions


def _first(query: StatsQuery) -> int:
    """The start of the range's first bucket: a range is read in whole buckets."""
    return math.floor(query.start.timestamp() / query.step_s) * query.step_s


def _narrowed(query: StatsQuery, viewer: Any) -> QuerySet[AgentSession] | None:
    """The sessions to read (``None``: every session's — no need to ask which)."""
    everything = not (query.agent or query.owner or query.source or query.instruction)
    if everything and (viewer is None or is_operator(viewer)):
        return None
    return stats_sessions(query, viewer=viewer)


def _runs(query: StatsQuery, viewer: Any, first: float) -> list[RunRow]:
    start = datetime.fromtimestamp(first, tz=UTC)
    sessions = _narrowed(query, viewer)
    return runs_between(start=start, end=query.end, sessions=sessions, status=query.status)


def _waits(query: StatsQuery, viewer: Any, first: int) -> list[WaitRow]:
    """The waits for a person asked in the range: local runs' and remote apps' (by source)."""
    start = datetime.fromtimestamp(first, tz=UTC)
    sessions = _narrowed(query, viewer)
    found: list[WaitRow] = []
    if query.source in ("", "local"):
        found += waits_between(start=start, end=query.end, sessions=sessions, tool=query.tool)
    if query.source in ("", "ingested"):
        found += pauses_between(start=start, end=query.end, sessions=sessions, tool=query.tool)
    return found


def _decisions(query: StatsQuery, viewer: Any, first: int) -> dict[tuple[int, str, str], int]:
    return decisions_read(
        start_s=first, end_s=math.ceil(query.end.timestamp()), step_s=query.step_s,
        sessions=_narrowed(query, viewer),
    )  # fmt: skip


def _summed(counts: Any) -> dict[str, int]:
    total: dict[str, int] = {}
    for found in counts:
        for key, n in found.items():
            total[key] = total.get(key, 0) + n
    return total


def _steps(
    query: StatsQuery, viewer: Any, first: int, *, step_s: int, exact: bool = False
) -> StepRead:
    """From the rollups for everyone's sessions (narrowed by agent, source, model, tool);
    from the spans of the sessions of one person — a user's own, or the owner asked for —
    and when ``exact``."""
    end_s = math.ceil(query.end.timestamp())
    everyone = viewer is None or is_operator(viewer)
    if everyone and not query.owner and not exact:
        external = {"ingested": True, "local": False}.get(query.source)
        return steps_read(
            start_s=first, end_s=end_s, step_s=step_s, agent=query.agent, external=external,
            model=query.model, tool=query.tool,
        )  # fmt: skip
    return steps_read_spans(
        start_s=first, end_s=end_s, step_s=step_s, model=query.model, tool=query.tool,
        sessions=stats_sessions(query, viewer=viewer),
    )  # fmt: skip


def _run_numbers(by_status: dict[str, int], seconds: list[float]) -> dict[str, Any]:
    """The runs' numbers from their count by status and their durations."""
    ended = sum(by_status.get(s, 0) for s in ("succeeded", "failed", "cancelled"))
    return {
        "runs": sum(by_status.values()),
        "runs_by_status": by_status,
        "error_rate": round(by_status.get("failed", 0) / ended, 4) if ended else None,
        "run_seconds": _percentiles(seconds),
    }


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
