"""The step rollups (``StepRollup``): the model and tool calls counted as they end, by minute,
hour and day, so that the Monitor reads a few thousand rows for any range instead of
millions of spans (docs/BENCHMARKS.md, "Monitor").

Each ended step adds one to its rows — one per period — keyed by its session's agent, owner
and source, its kind, name, outcome and **duration bin**. The bins grow by a factor of
2^(1/4) from 1 ms (bin 0: under a millisecond; the last: 7.6 h and over), so a percentile
read from them (the bin's geometric middle) is within 9 % of the exact one. Counts, tokens
and duration sums are exact. The database adds (``INSERT … ON CONFLICT DO UPDATE SET n =
n + excluded.n``): writers at once never lose a count, and a rollup changes in the
transaction that stores its span's final version (a final version is stored once).

What the rollups do not follow: a deleted session's calls stay counted (what happened,
happened), and a final version amended later (an outside sender's log records, which carry
no usage) is counted as it first was.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from typing import Any, NamedTuple

from django.db.models import F, Q, QuerySet, Sum

from agentdash.agent_sessions.models import EXTERNAL_SESSION_PREFIX, AgentSession
from agentdash.changes.bulk import rows_insert
from agentdash.spans.models import Span, StepRollup
from runtime.telemetry.attributes import AgentDash, GenAI

PERIODS = (60, 3600, 86400)
STEP_KINDS = ("model", "tool")
BINS_PER_DOUBLING = 4
BINS = 100
SUMS = ("calls", "seconds", "tokens_in", "tokens_out", "tokens_cached", "tokens_thinking")
KEY = ("period", "bucket", "kind", "name", "agent", "owner_id", "external", "error", "bin")


def duration_bin(seconds: float) -> int:
    """The bin of a duration."""
    ms = seconds * 1000
    if ms < 1:
        return 0
    return min(BINS - 1, 1 + math.floor(BINS_PER_DOUBLING * math.log2(ms)))


def bin_seconds(index: int) -> float:
    """What a bin stands for: its geometric middle (bin 0: half a millisecond)."""
    if index <= 0:
        return 0.0005
    return float(2 ** ((index - 0.5) / BINS_PER_DOUBLING) / 1000)


class Step(NamedTuple):
    """What a rollup counts of one ended span."""

    session_id: str
    start_time: int
    end_time: int
    error: bool
    kind: str
    name: str
    tokens: tuple[int, int, int, int]


def step_of(
    *, session_id: str | None, start_time: int, end_time: int | None, status: str,
    attributes: dict[str, Any], usage_model: str, tokens: Sequence[int | None],
) -> Step | None:  # fmt: skip
    """The step a span's final version counts as, or ``None`` (not ended, no session, not a
    model or tool call)."""
    kind = attributes.get(AgentDash.SPAN_KIND)
    if end_time is None or not session_id or kind not in STEP_KINDS:
        return None
    name = str(attributes.get(GenAI.TOOL_NAME) or "") if kind == "tool" else usage_model
    counts = tuple(int(t or 0) for t in tokens)
    return Step(session_id, start_time, end_time, status == Span.Status.ERROR, str(kind),
                name[:255], counts)  # type: ignore[arg-type]  # fmt: skip


def rollups_count(
    steps: Iterable[Step], *, sign: int = 1, sessions_model: Any = AgentSession,
    rollup_model: Any = StepRollup,
) -> None:  # fmt: skip
    """Add ``steps`` to the rollups (``sign=-1``: take them away). Call in the transaction
    that stores (or changes) their spans. (The models: a migration's own, when it counts.)"""
    found = list(steps)
    if not found:
        return
    sessions = {
        pk: (app, owner or 0)
        for pk, app, owner in sessions_model.objects.filter(
            pk__in={s.session_id for s in found}
        ).values_list("pk", "app_name", "owner_id")
    }
    rows: dict[tuple[Any, ...], list[float]] = {}
    for step in found:
        agent, owner = sessions.get(step.session_id, ("", 0))
        seconds = max(0, step.end_time - step.start_time) / 1e9
        external = step.session_id.startswith(EXTERNAL_SESSION_PREFIX)
        where = (step.kind, step.name, agent[:128], owner, external, step.error,
                 duration_bin(seconds))  # fmt: skip
        start_s = step.start_time // 1_000_000_000
        for period in PERIODS:
            key = (period, start_s - start_s % period, *where)
            sums = rows.setdefault(key, [0, 0.0, 0, 0, 0, 0])
            sums[0] += sign
            sums[1] += sign * seconds
            for i, tokens in enumerate(step.tokens, start=2):
                sums[i] += sign * tokens
    rows_insert(
        model=rollup_model, fields=(*KEY, *SUMS), unique=KEY, add=SUMS,
        rows=[(*key, int(s[0]), float(s[1]), *(int(t) for t in s[2:])) for key, s in rows.items()],
    )  # fmt: skip


class StepRead(NamedTuple):
    """The rollups of a range, folded into buckets: ``by_bin`` — (bucket, kind, bin) →
    calls, errors, tokens in, out, cached, thinking; ``by_name`` — (kind, name) → calls,
    errors, tokens in, out; ``model_tokens`` — (bucket, model) → calls, tokens in, out,
    cached, thinking (for their cost)."""

    by_bin: dict[tuple[int, str, int], tuple[int, int, int, int, int, int]]
    by_name: dict[tuple[str, str], tuple[int, int, int, int, int, int]]
    model_tokens: dict[tuple[int, str], tuple[int, int, int, int, int]]


def period_for(step_s: int) -> int:
    """The rollups a bucket of ``step_s`` seconds is read from: the longest period that
    divides it."""
    return max(p for p in PERIODS if step_s % p == 0)


def steps_read(
    *, start_s: int, end_s: int, step_s: int, agent: str = "", owner_ids: Collection[int] | None,
    external: bool | None = None, model: str = "", tool: str = "",
) -> StepRead:  # fmt: skip
    """The calls that started in ``[start_s, end_s)`` (whole periods), in buckets of
    ``step_s`` (a bucket's key: its start), narrowed by the filters (``owner_ids`` ``None``:
    every owner)."""
    period = period_for(step_s)
    rows: QuerySet[StepRollup] = StepRollup.objects.filter(
        period=period, bucket__gte=start_s - start_s % period, bucket__lt=end_s
    )
    if agent:
        rows = rows.filter(agent=agent)
    if owner_ids is not None:
        rows = rows.filter(owner_id__in=list(owner_ids))
    if external is not None:
        rows = rows.filter(external=external)
    kinds = Q()
    for kind, name in (("model", model), ("tool", tool)):
        kinds |= Q(kind=kind, name=name) if name else Q(kind=kind)
    rows = rows.filter(kinds)
    folded = rows.annotate(at=F("bucket") - F("bucket") % step_s)
    tokens = {t: Sum(t) for t in ("tokens_in", "tokens_out", "tokens_cached", "tokens_thinking")}
    sums = {"n": Sum("calls"), "errors": Sum("calls", filter=Q(error=True)), **tokens}
    by_bin = {
        (r["at"], r["kind"], r["bin"]): (
            r["n"], r["errors"] or 0, r["tokens_in"], r["tokens_out"], r["tokens_cached"],
            r["tokens_thinking"],
        )
        for r in folded.values("at", "kind", "bin").annotate(**sums).order_by()
    }  # fmt: skip
    by_name = {
        (r["kind"], r["name"]): (
            r["n"], r["errors"] or 0, r["tokens_in"], r["tokens_out"], r["tokens_cached"],
            r["tokens_thinking"],
        )
        for r in rows.values("kind", "name").annotate(**sums).order_by()
    }  # fmt: skip
    model_tokens = {
        (r["at"], r["name"]): (r["n"], r["tokens_in"], r["tokens_out"], r["tokens_cached"],
                               r["tokens_thinking"])
        for r in folded.filter(kind="model").values("at", "name")
        .annotate(n=Sum("calls"), **tokens).order_by()
    }  # fmt: skip
    return StepRead(by_bin=by_bin, by_name=by_name, model_tokens=model_tokens)


def versions_counted(versions: Iterable[Any]) -> None:
    """Count the final versions among ``versions`` (span versions just stored)."""
    rollups_count(
        step
        for v in versions
        if (step := step_of(
            session_id=v.session_id, start_time=v.start_time, end_time=v.end_time,
            status=v.status, attributes=v.attributes, usage_model=v.usage_model,
            tokens=(v.tokens_in, v.tokens_out, v.tokens_cached, v.tokens_thinking),
        )) is not None
    )  # fmt: skip


def rows_steps(rows: QuerySet[Any]) -> list[Step]:
    """The steps stored rows count as (to take them away before they change)."""
    found = []
    for row in rows.only(
        "session_id", "start_time", "end_time", "status", "attributes", "usage_model",
        "tokens_in", "tokens_out", "tokens_cached", "tokens_thinking",
    ):  # fmt: skip
        step = step_of(
            session_id=row.session_id, start_time=row.start_time, end_time=row.end_time,
            status=row.status, attributes=row.attributes or {}, usage_model=row.usage_model or "",
            tokens=(row.tokens_in, row.tokens_out, row.tokens_cached, row.tokens_thinking),
        )  # fmt: skip
        if step is not None:
            found.append(step)
    return found


def rollups_rebuild(
    *, span_model: Any = Span, sessions_model: Any = AgentSession,
    rollup_model: Any = StepRollup, chunk: int = 5000,
) -> int:  # fmt: skip
    """Count every stored span anew (the rollups emptied first); how many steps. For the
    migration that makes the rollups, and ``manage.py rollups --rebuild`` after a repair.
    Run it while nothing stores spans: a span stored meanwhile may be counted twice."""
    rollup_model.objects.all().delete()
    ended = span_model.objects.filter(end_time__isnull=False, session__isnull=False)
    counted, last = 0, 0
    while True:
        page = list(ended.filter(pk__gt=last).order_by("pk").values_list("pk", flat=True)[:chunk])
        if not page:
            return counted
        last = page[-1]
        steps = rows_steps(span_model.objects.filter(pk__in=page))
        rollups_count(steps, sessions_model=sessions_model, rollup_model=rollup_model)
        counted += len(steps)
