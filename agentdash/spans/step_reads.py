"""The model and tool calls of a range, in buckets, as the Monitor reads them: from the step
rollups (``spans.rollups``) for everyone's sessions or one agent's, tool's, model's or
source's — or, for the sessions of one person (a user sees their own; an operator may ask
for one owner's), from those sessions' spans themselves, folded the same way. Either way
the answer is a :class:`StepRead`."""

from __future__ import annotations

from typing import Any, NamedTuple

from django.db.models import BooleanField, Count, F, Q, QuerySet, Sum
from django.db.models.expressions import RawSQL
from django.db.models.fields.json import KT

from agentdash.spans.models import Span, StepRollup
from agentdash.spans.rollups import (
    BIN_FIELDS,
    BINS,
    FIRST_TOKEN,
    PERIODS,
    STEP_KINDS,
    duration_bin,
    first_token_seconds,
)
from runtime.telemetry.attributes import AgentDash, GenAI

TOKENS = ("tokens_in", "tokens_out", "tokens_cached", "tokens_thinking")
SESSIONS_NAMED = 2000
"""One person's sessions up to this many are named by their ids in the read of their spans:
the database then reads each one's spans over its index. Asked by a subquery instead,
PostgreSQL scanned every span of the range (a tenth of the time named: docs/BENCHMARKS.md)."""


class StepRead(NamedTuple):
    """The calls of a range folded into buckets: ``by_bucket`` — (bucket, kind) → calls,
    errors, tokens in, out, cached, thinking; ``bins`` — (bucket, kind) → how many fell in
    each duration bin; ``by_name`` — (kind, name) → calls, errors and the tokens;
    ``model_tokens`` — (bucket, model) → calls and the tokens (for their cost)."""

    by_bucket: dict[tuple[int, str], tuple[int, ...]]
    bins: dict[tuple[int, str], tuple[int, ...]]
    by_name: dict[tuple[str, str], tuple[int, ...]]
    model_tokens: dict[tuple[int, str], tuple[int, ...]]


def period_for(step_s: int) -> int:
    """The rollups a bucket of ``step_s`` seconds is read from: the longest period that
    divides it (``ValueError`` if none does)."""
    found = [p for p in PERIODS if step_s % p == 0]
    if not found:
        raise ValueError(f"no rollup period divides {step_s} s (periods: {PERIODS})")
    return max(found)


def steps_read(
    *, start_s: int, end_s: int, step_s: int, agent: str = "", external: bool | None = None,
    model: str = "", tool: str = "",
) -> StepRead:  # fmt: skip
    """The calls that started in ``[start_s, end_s)`` (whole periods), in buckets of
    ``step_s`` (a bucket's key: its start), narrowed by the filters, from the rollups."""
    period = period_for(step_s)
    rows: QuerySet[StepRollup] = StepRollup.objects.filter(
        period=period, bucket__gte=start_s - start_s % period, bucket__lt=end_s
    )
    if agent:
        rows = rows.filter(agent=agent)
    if external is not None:
        rows = rows.filter(external=external)
    kinds = Q()
    for kind, name in (("model", model), (FIRST_TOKEN, model), ("tool", tool)):
        kinds |= Q(kind=kind, name=name) if name else Q(kind=kind)
    rows = rows.filter(kinds)
    folded = rows.annotate(at=F("bucket") - F("bucket") % step_s)
    tokens = {t: Sum(t) for t in TOKENS}
    sums = {"n": Sum("calls"), "errors": Sum("calls", filter=Q(error=True)), **tokens}
    bins = {f"{b}_n": Sum(b) for b in BIN_FIELDS}

    def values(r: dict[str, Any], *names: str) -> tuple[int, ...]:
        return tuple(int(r[n] or 0) for n in names)

    buckets = list(folded.values("at", "kind").annotate(**sums, **bins).order_by())
    return StepRead(
        by_bucket={(r["at"], r["kind"]): values(r, "n", "errors", *TOKENS) for r in buckets},
        bins={(r["at"], r["kind"]): values(r, *bins) for r in buckets},
        by_name={
            (r["kind"], r["name"]): values(r, "n", "errors", *TOKENS)
            for r in rows.values("kind", "name").annotate(**sums).order_by()
        },
        model_tokens={
            (r["at"], r["name"]): values(r, "n", *TOKENS)
            for r in folded.filter(kind="model").values("at", "name")
            .annotate(n=Sum("calls"), **tokens).order_by()
        },
    )  # fmt: skip


def steps_read_spans(
    *, start_s: int, end_s: int, step_s: int, sessions: QuerySet[Any], model: str = "",
    tool: str = "",
) -> StepRead:  # fmt: skip
    """:func:`steps_read` of the sessions of ``sessions``, from their spans (exact counts;
    the same bins)."""
    rows = (
        Span.objects.filter(
            session_id__in=_named(sessions),
            start_time__gte=start_s * 1_000_000_000,
            start_time__lt=end_s * 1_000_000_000,
            end_time__isnull=False,
        )
        .annotate(step=KT(f"attributes__{AgentDash.SPAN_KIND}"),
                  tool=KT(f"attributes__{GenAI.TOOL_NAME}"),
                  first=F(f"attributes__{GenAI.RESPONSE_TIME_TO_FIRST_TOKEN}"))
    )  # fmt: skip
    # One exact lookup per kind: ``__in`` on a key's text wraps each value in JSON_EXTRACT
    # on SQLite ("malformed JSON").
    kinds = Q()
    for kind in STEP_KINDS:
        kinds |= Q(**{f"attributes__{AgentDash.SPAN_KIND}": kind})
    sums: tuple[dict[Any, list[int]], ...] = ({}, {}, {}, {})  # StepRead's, as lists
    for start, end, step, tool_name, usage_model, status, first, *tokens in rows.filter(
        kinds
    ).values_list("start_time", "end_time", "step", "tool", "usage_model", "status", "first",
                  *TOKENS):  # fmt: skip
        name = str((tool_name if step == "tool" else usage_model) or "")
        if (step == "model" and model and name != model) or (
            step == "tool" and tool and name != tool
        ):
            continue
        at = start // 1_000_000_000
        at -= at % step_s
        error = int(status == Span.Status.ERROR)
        _fold(sums, at, str(step), name, error, max(0, end - start) / 1e9,
              [int(t or 0) for t in tokens])  # fmt: skip
        waited = first_token_seconds({GenAI.RESPONSE_TIME_TO_FIRST_TOKEN: first})
        if step == "model" and waited is not None:
            _fold(sums, at, FIRST_TOKEN, name, error, waited, [0, 0, 0, 0])
    return StepRead(*({key: tuple(v) for key, v in found.items()} for found in sums))


def _fold(
    sums: tuple[dict[Any, list[int]], ...], at: int, kind: str, name: str, error: int,
    seconds: float, tokens: list[int],
) -> None:  # fmt: skip
    """One call (or a streamed call's first token) into the sums, as the rollups count it."""
    by_bucket, bins, by_name, model_tokens = sums
    _add(by_bucket, (at, kind), [1, error, *tokens])
    found = bins.get((at, kind))
    if found is None:
        found = bins[(at, kind)] = [0] * BINS
    found[duration_bin(seconds)] += 1
    _add(by_name, (kind, name), [1, error, *tokens])
    if kind == "model":
        _add(model_tokens, (at, name), [1, *tokens])


def _add(into: dict[Any, list[int]], key: Any, values: list[int]) -> None:
    found = into.get(key)
    if found is None:
        into[key] = values
        return
    for i, value in enumerate(values):
        found[i] += value


def decisions_read(
    *, start_s: int, end_s: int, step_s: int, sessions: QuerySet[Any] | None = None
) -> dict[tuple[int, str, str], int]:
    """The guardrail decisions of spans that started in ``[start_s, end_s)`` (of the sessions
    of ``sessions`` when given): (bucket, guardrail, decision) → how many. Counted by the
    database over the decisions' own index (the spans with a decision only)."""
    rows = Span.objects.filter(
        _decided(), start_time__gte=start_s * 1_000_000_000, start_time__lt=end_s * 1_000_000_000
    )
    if sessions is not None:
        rows = rows.filter(session_id__in=sessions.values("pk"))
    second = F("start_time") / 1_000_000_000  # whole seconds: integers divide as integers
    found = (
        rows.annotate(at=second - second % step_s)
        .values("at", "guardrail", "decision")
        .annotate(n=Count("id"))
        .order_by()
    )
    return {(int(r["at"]), r["guardrail"], r["decision"]): int(r["n"]) for r in found}


def sessions_with_steps(
    *, start_s: float, end_s: float, kind: str, error: bool = False, name: str = ""
) -> QuerySet[Span, Any]:
    """The ids (``session_id``) of the sessions with a ``kind`` call (model or tool; failed
    when ``error``; of the model or tool ``name`` when given) that started in
    ``[start_s, end_s)``: the sessions behind a bucket of the Monitor's charts."""
    if kind not in STEP_KINDS:
        raise ValueError(f"no step kind {kind!r} (one of {STEP_KINDS})")
    rows = Span.objects.filter(
        start_time__gte=int(start_s * 1e9), start_time__lt=int(end_s * 1e9),
        end_time__isnull=False, **{f"attributes__{AgentDash.SPAN_KIND}": kind},
    )  # fmt: skip
    if error:
        rows = rows.filter(status=Span.Status.ERROR)
    if name and kind == "model":
        rows = rows.filter(usage_model=name)
    elif name:
        rows = rows.filter(**{f"attributes__{GenAI.TOOL_NAME}": name})
    return rows.values("session_id")


def sessions_with_decision(*, start_s: float, end_s: float, decision: str) -> set[str]:
    """The ids of the sessions where a guardrail decided ``decision`` in a span that started
    in ``[start_s, end_s)``: read on their own, over the decisions' own index (its condition
    names the table, which a subquery would rename)."""
    return set(
        Span.objects.filter(
            _decided(), decision=decision, start_time__gte=int(start_s * 1e9),
            start_time__lt=int(end_s * 1e9), session__isnull=False,
        ).values_list("session_id", flat=True).distinct()
    )  # fmt: skip


def _decided() -> RawSQL:
    """The condition of the decisions' partial index written as the index has it (a literal,
    not a parameter: SQLite uses a partial index only for a WHERE that states its own)."""
    return RawSQL('NOT ("spans_span"."decision" = \'\')', (), output_field=BooleanField())


def _named(sessions: QuerySet[Any]) -> Any:
    """``sessions``' ids as a list (a query past :data:`SESSIONS_NAMED` of them)."""
    ids = list(sessions.values_list("pk", flat=True)[: SESSIONS_NAMED + 1])
    return ids if len(ids) <= SESSIONS_NAMED else sessions.values("pk")


def runs_with_tool_errors() -> QuerySet[Span, Any]:
    """The ids (``run_id``) of the runs with a tool call that failed."""
    return Span.objects.filter(
        run__isnull=False, status=Span.Status.ERROR,
        **{f"attributes__{AgentDash.SPAN_KIND}": "tool"},
    ).values("run_id")  # fmt: skip


def run_steps(*, run_id: int, limit: int = 300) -> list[dict[str, Any]]:
    """A run's spans in start order (at most ``limit``): name, kind, status, its error
    message, duration in ms — what a reviewer reads beside the conversation."""
    rows = Span.objects.filter(run_id=run_id).order_by("start_time", "id")[:limit]
    return [
        {"name": s.name, "kind": (s.attributes or {}).get(AgentDash.SPAN_KIND) or "other",
         "status": s.status, "message": s.status_message,
         "ms": round((s.end_time - s.start_time) / 1e6, 1) if s.end_time else None}
        for s in rows
    ]  # fmt: skip


def instruction_versions(*, session_id: str, run_id: int | None = None) -> list[str]:
    """The instruction versions the model calls of a session (of one run) were given, each
    as ``agent vN`` (``agent code``), in the order first used (docs/INSTRUCTIONS.md)."""
    key = AgentDash.INSTRUCTION_VERSION
    rows = Span.objects.filter(session_id=session_id, attributes__has_key=key)
    if run_id is not None:
        rows = rows.filter(run_id=run_id)
    found: list[str] = []
    for attributes in rows.order_by("start_time").values_list("attributes", flat=True)[:2000]:
        said = f"{attributes.get(GenAI.AGENT_NAME, '')} {attributes.get(key)}".strip()
        if said not in found:
            found.append(said)
    return found


def sessions_with_instruction(*, agent: str, version: str) -> QuerySet[Span, Any]:
    """The ids (``session_id``) of the sessions where ``agent``'s model calls were given
    instruction ``version`` (``v2``, ``code``)."""
    return Span.objects.filter(**{
        f"attributes__{AgentDash.INSTRUCTION_VERSION}": version,
        f"attributes__{GenAI.AGENT_NAME}": agent,
    }).values("session_id")  # fmt: skip
