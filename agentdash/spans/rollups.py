"""The step rollups (``StepRollup``): the model and tool calls counted as they end, by five
minutes, hour, six hours and day, so that the Monitor reads rows per bucket and kind of call
instead of every span of a range (docs/BENCHMARKS.md, "Monitor"; read by ``step_reads``).

Each ended step adds to its rows — one per period — keyed by its session's agent and
source, its kind, name and outcome (not by owner: one person's numbers are read from their
sessions' spans, ``step_reads``): its count, duration and tokens, and one in the column of
its **duration bin**. The bins grow by a factor of 2^(1/3) from 1 ms (bin 0: under a
millisecond; the last: 2.9 h and over), so a percentile read from them (the bin's geometric
middle) is within 12.3 % of the exact one. Counts, tokens
and duration sums are exact. The database adds (``INSERT … ON CONFLICT DO UPDATE SET n =
n + excluded.n``): writers at once never lose a count, and a rollup changes in the
transaction that stores its span's final version (a final version is stored once).

What the rollups do not follow: a deleted session's calls stay counted (what happened,
happened), and a final version amended later (an outside sender's log records, which carry
no usage) is counted as it first was.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from django.db.models import QuerySet

from agentdash.agent_sessions.models import EXTERNAL_SESSION_PREFIX, AgentSession
from agentdash.changes.bulk import rows_insert
from agentdash.core.prepared import PreparedQuery
from agentdash.spans.models import ROLLUP_BINS, Span, StepRollup
from runtime.telemetry.attributes import AgentDash, GenAI

PERIODS = (300, 3600, 21600, 86400)
assert all(period % PERIODS[0] == 0 for period in PERIODS)  # ``rollups_count`` needs it
STEP_KINDS = ("model", "tool")
FIRST_TOKEN = "first_token"
"""The rollup rows of streamed model calls' time to their first token: one more step per
streamed call (``gen_ai.response.time_to_first_token``), named by its model, counted beside
the call itself — its bins hold the waits, its count the streamed calls, its tokens none."""
ROLLUP_KINDS = (*STEP_KINDS, FIRST_TOKEN)
BINS_PER_DOUBLING = 3
BINS = ROLLUP_BINS
BIN_FIELDS = tuple(f"b{n:02d}" for n in range(BINS))
SUMS = ("calls", "seconds", "tokens_in", "tokens_out", "tokens_cached", "tokens_thinking")
KEY = ("period", "bucket", "kind", "name", "agent", "external", "error")


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


def steps_of(
    *, session_id: str | None, start_time: int, end_time: int | None, status: str,
    attributes: dict[str, Any], usage_model: str, tokens: Sequence[int | None],
) -> list[Step]:  # fmt: skip
    """The steps a span's final version counts as: none (not ended, no session, not a model
    or tool call), the call, and for a streamed model call its time to the first token."""
    kind = attributes.get(AgentDash.SPAN_KIND)
    if end_time is None or not session_id or kind not in STEP_KINDS:
        return []
    name = str(attributes.get(GenAI.TOOL_NAME) or "") if kind == "tool" else usage_model
    counts = tuple(int(t or 0) for t in tokens)
    error = status == Span.Status.ERROR
    found = [Step(session_id, start_time, end_time, error, str(kind), name[:255],
                  counts)]  # type: ignore[arg-type]  # fmt: skip
    waited = first_token_seconds(attributes) if kind == "model" else None
    if waited is not None:
        found.append(Step(session_id, start_time, start_time + round(waited * 1e9), error,
                          FIRST_TOKEN, name[:255], (0, 0, 0, 0)))  # fmt: skip
    return found


def first_token_seconds(attributes: dict[str, Any]) -> float | None:
    """A model call's time to its first token, when it says one that can be (a sender's
    attribute may be anything: a number of seconds from 0 to a day is taken)."""
    value = attributes.get(GenAI.RESPONSE_TIME_TO_FIRST_TOKEN)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or not 0 <= value <= 86400:
        return None
    return float(value)


_APPS_OF: PreparedQuery[tuple[str, str]] = PreparedQuery(
    lambda session_ids: AgentSession.objects.filter(pk__in=session_ids).values_list(
        "pk", "app_name"
    )
)


def rollups_count(
    steps: Iterable[Step], *, sign: int = 1, sessions_model: Any = AgentSession,
    rollup_model: Any = StepRollup,
) -> None:  # fmt: skip
    """Add ``steps`` to the rollups (``sign=-1``: take them away). Call in the transaction
    that stores (or changes) their spans. (The models: a migration's own, when it counts.)"""
    found = list(steps)
    if not found:
        return
    ids = sorted({s.session_id for s in found})
    if sessions_model is AgentSession:
        sessions = dict(_APPS_OF.rows(ids))
    else:  # a migration's model
        sessions = dict(sessions_model.objects.filter(pk__in=ids).values_list("pk", "app_name"))
    # Added up by the shortest period first (each longer one is a whole number of them: a
    # bucket of it lies in one bucket of every longer period), then each sum into its
    # periods' rows: a step costs one row's additions, not one per period.
    shortest: dict[tuple[Any, ...], list[Any]] = {}
    width = len(SUMS) + BINS
    for step in found:
        agent = str(sessions.get(step.session_id, ""))
        seconds = max(0, step.end_time - step.start_time) / 1e9
        external = step.session_id.startswith(EXTERNAL_SESSION_PREFIX)
        start_s = step.start_time // 1_000_000_000
        key = (start_s - start_s % PERIODS[0], step.kind, step.name, agent[:128], external,
               step.error)  # fmt: skip
        sums = shortest.get(key)
        if sums is None:
            sums = shortest[key] = [0] * width
        sums[0] += sign
        sums[1] += sign * seconds
        for i, tokens in enumerate(step.tokens, start=2):
            sums[i] += sign * tokens
        sums[len(SUMS) + duration_bin(seconds)] += sign
    rows: dict[tuple[Any, ...], list[Any]] = {}
    for (bucket, *where), sums in shortest.items():
        for period in PERIODS:
            key = (period, bucket - bucket % period, *where)
            kept = rows.get(key)
            if kept is None:
                rows[key] = list(sums)
            else:
                rows[key] = [a + b for a, b in zip(kept, sums, strict=True)]
    # In key order: writers of overlapping rows (two workers' flushes of one agent's calls)
    # then lock them in one order, and wait for each other instead of deadlocking.
    rows_insert(
        model=rollup_model, fields=(*KEY, *SUMS, *BIN_FIELDS), unique=KEY,
        add=(*SUMS, *BIN_FIELDS), as_given=True,
        rows=[(*key, s[0], float(s[1]), *s[2:]) for key, s in sorted(rows.items())],
    )  # fmt: skip


def versions_counted(versions: Iterable[Any]) -> None:
    """Count the final versions among ``versions`` (span versions just stored)."""
    rollups_count(
        step
        for v in versions
        for step in steps_of(
            session_id=v.session_id, start_time=v.start_time, end_time=v.end_time,
            status=v.status, attributes=v.attributes, usage_model=v.usage_model,
            tokens=(v.tokens_in, v.tokens_out, v.tokens_cached, v.tokens_thinking),
        )
    )  # fmt: skip


def rows_steps(rows: QuerySet[Any]) -> list[Step]:
    """The steps stored rows count as (to take them away before they change)."""
    found = []
    for row in rows.only(
        "session_id", "start_time", "end_time", "status", "attributes", "usage_model",
        "tokens_in", "tokens_out", "tokens_cached", "tokens_thinking",
    ):  # fmt: skip
        found.extend(steps_of(
            session_id=row.session_id, start_time=row.start_time, end_time=row.end_time,
            status=row.status, attributes=row.attributes or {}, usage_model=row.usage_model or "",
            tokens=(row.tokens_in, row.tokens_out, row.tokens_cached, row.tokens_thinking),
        ))  # fmt: skip
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
