"""A session's spans as compact summaries, page by page: what the timeline needs to draw a
row (identity, timing, status and a few display fields read out of the attributes), without
the attributes themselves. The full span is read when someone opens it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db.models import F, Q, Window
from django.db.models.fields.json import KT
from django.db.models.functions import Mod, RowNumber

from agentdash.spans.models import Span
from agentdash.spans.totals import price_book
from agentdash.spans.usage import USAGE_COLUMNS, PriceBook, span_usage
from runtime.telemetry.attributes import AgentDash, GenAI, StepKind

SPAN_HEAD = (
    "trace_id",
    "span_id",
    "parent_span_id",
    "name",
    "kind",
    "start_time",
    "end_time",
    "status",
    "status_message",
)
"""The span's own fields a summary and a span change's data both begin with."""
_STORED = (*SPAN_HEAD, "run_id", "seq")
"""The span's own columns a summary starts with."""

SUMMARY_FIELDS = (
    *_STORED,
    "span_kind",
    "label",
    "outcome",
    "hook",
    "tokens_in",
    "tokens_out",
    "offline",
    "cancelled",
    "tokens_cached",
    "tokens_thinking",
    "cost_usd",
    "decision",
)
"""The columns of a summary row, in order (docs/PROTOCOL.md, "Pages over HTTP")."""

PAGE_DEFAULT = 5_000
PAGE_MAX = 10_000
STATUS_MESSAGE_CHARS = 500

_KINDS = set(StepKind.ALL)
_LABEL_OF_KIND = {
    StepKind.CALLBACK: "a_callback",
    StepKind.TOOL: "a_tool",
    StepKind.AGENT: "a_agent",
    StepKind.MODEL: "a_model",
}
# What is read out of the attributes, by the database (JSON path of one key each).
_EXTRACTED = {
    "a_kind": AgentDash.SPAN_KIND,
    "a_callback": AgentDash.CALLBACK_NAME,
    "a_tool": GenAI.TOOL_NAME,
    "a_agent": GenAI.AGENT_NAME,
    "a_model": GenAI.REQUEST_MODEL,
    "a_outcome": AgentDash.CALLBACK_OUTCOME,
    "a_hook": AgentDash.CALLBACK_HOOK,
    "a_offline": AgentDash.MODEL_OFFLINE,
    "a_cancelled": AgentDash.CANCELLED,
}
# Filled by the store from the span's guardrail attributes (agentdash.spans.decisions).
_DECISION = "decision"


class BadCursor(ValueError):
    """A page cursor this module did not write."""


@dataclass(frozen=True)
class SummaryPage:
    rows: list[list[Any]]
    next: str | None
    """The cursor of the page after this one; ``None`` when this page is the last."""


def span_kind_of(*, kind_attribute: Any, name: str) -> str:
    """Our kind of a span: its ``agentdash.span.kind``, else guessed from its GenAI operation
    name (``invoke_agent …`` → agent …), else ``""``."""
    if kind_attribute in _KINDS:
        return str(kind_attribute)
    for prefix, kind in StepKind.BY_NAME_PREFIX:
        if name.startswith(prefix):
            return kind
    return ""


def cursor_parse(text: str) -> tuple[int, int]:
    """``"<start_time>.<id>"`` → the pair; ``BadCursor`` for anything else."""
    start, dot, pk = text.partition(".")
    try:
        if dot and len(text) <= 48:
            return int(start), int(pk)
    except ValueError:
        pass
    raise BadCursor("a cursor is the 'next' value of the page before")


def span_summaries(
    *,
    session_id: str,
    after: str | None = None,
    limit: int = PAGE_DEFAULT,
    until: str | None = None,
) -> SummaryPage:
    """One page of the session's spans in start order (ties by id), each a list of
    :data:`SUMMARY_FIELDS` values, after the cursor ``after`` (``None``: from the first)
    and, with ``until``, not past that cursor (a page of a :func:`span_page_plan`).

    A span's start never changes, so a span stored before the first page was read is on
    exactly one page however the session grows meanwhile — also when the pages of a plan
    are read at once: each is bounded by its cursors, not by a count. ``BadCursor`` for a
    cursor this function did not write; ``limit`` must be 1..``PAGE_MAX``."""
    if not 1 <= limit <= PAGE_MAX:
        raise ValueError(f"limit must be 1..{PAGE_MAX}")
    rows = Span.objects.filter(session_id=session_id)
    if after is not None:
        start, pk = cursor_parse(after)
        rows = rows.filter(Q(start_time__gt=start) | Q(start_time=start, id__gt=pk))
    if until is not None:
        start, pk = cursor_parse(until)
        rows = rows.filter(Q(start_time__lt=start) | Q(start_time=start, id__lte=pk))
    values = (
        rows.order_by("start_time", "id")
        .annotate(**{alias: KT(f"attributes__{key}") for alias, key in _EXTRACTED.items()})
        .values_list("id", *_STORED, *USAGE_COLUMNS, *_EXTRACTED, _DECISION)[: limit + 1]
    )
    found = list(values)
    more = len(found) > limit
    found = found[:limit]
    prices = price_book()
    out = [_summary_row(row, prices) for row in found]
    last = found[-1] if found else None
    return SummaryPage(rows=out, next=f"{last[6]}.{last[0]}" if more and last else None)


def span_page_plan(*, session_id: str, after: str, size: int) -> list[str]:
    """Where the pages after cursor ``after`` begin, ``size`` spans apart: ``after`` itself,
    then the cursor of every ``size``-th span after it (read from the index alone). A client
    asks for the pages between two cursors at once (``after``/``until``), the last one as
    any page (its ``next`` goes on if the session grew)."""
    if not 1 <= size <= PAGE_MAX:
        raise ValueError(f"size must be 1..{PAGE_MAX}")
    start, pk = cursor_parse(after)
    # Numbered and picked by the database: a few rows come back, not every key.
    keys = (
        Span.objects.filter(session_id=session_id)
        .filter(Q(start_time__gt=start) | Q(start_time=start, id__gt=pk))
        .annotate(number=Window(RowNumber(), order_by=[F("start_time").asc(), F("id").asc()]))
        .annotate(left=Mod(F("number"), size))
        .filter(left=0)
        .order_by("start_time", "id")
        .values_list("start_time", "id")
    )
    return [after, *(f"{at}.{key}" for at, key in keys)]


_USAGE_AT = 12
_EXTRACTED_AT = _USAGE_AT + len(USAGE_COLUMNS)
_DECISION_AT = _EXTRACTED_AT + len(_EXTRACTED)


def _summary_row(row: tuple[Any, ...], prices: PriceBook) -> list[Any]:
    usage = span_usage(dict(zip(USAGE_COLUMNS, row[_USAGE_AT:_EXTRACTED_AT], strict=True)), prices)
    extracted = dict(zip(_EXTRACTED, row[_EXTRACTED_AT:_DECISION_AT], strict=True))
    shown = _shown(row[4], row[2], extracted)
    return _row(row[1:_USAGE_AT], usage, shown, row[_DECISION_AT])


def span_summary(span: Any, *, seq: int, usage: Mapping[str, Any] | None) -> dict[str, Any]:
    """The summary of one span (a stored row, or a version being stored) by field name: the
    row a page of :func:`span_summaries` has for it, computed by the same code — what a live
    ``span`` change carries (``summary``), so a page and a socket show a span alike."""
    return summary_of(span, summary_shown(span), seq=seq, usage=usage)


def summary_shown(span: Any) -> tuple[Any, ...]:
    """What a span's summary reads out of its attributes, as :data:`SHOWN` names it: it
    depends on the span alone (not on its seq, run or prices), so it can be read once."""
    attributes = span.attributes if isinstance(span.attributes, Mapping) else {}
    extracted = {alias: _as_stored_text(attributes.get(key)) for alias, key in _EXTRACTED.items()}
    return _shown(span.name, span.span_id, extracted)


def summary_of(
    span: Any, shown: tuple[Any, ...], *, seq: int, usage: Mapping[str, Any] | None
) -> dict[str, Any]:
    """:func:`span_summary` from what :func:`summary_shown` read of ``span``."""
    stored = (
        span.trace_id, span.span_id, span.parent_span_id, span.name, span.kind,
        span.start_time, span.end_time, span.status, span.status_message, span.run_id, seq,
    )  # fmt: skip
    return dict(zip(SUMMARY_FIELDS, _row(stored, usage, shown, span.decision), strict=True))


SHOWN = ("span_kind", "label", "outcome", "hook", "offline", "cancelled")
"""The summary's fields read out of the attributes, in :func:`summary_shown`'s order."""


def _shown(name: str, span: str, extracted: Mapping[str, Any]) -> tuple[Any, ...]:
    span_kind = span_kind_of(kind_attribute=extracted["a_kind"], name=name)
    label = extracted.get(_LABEL_OF_KIND.get(span_kind, "")) or name or span
    return (
        span_kind,
        str(label),
        _text(extracted["a_outcome"]),
        _text(extracted["a_hook"]),
        _flag(extracted["a_offline"]),
        _flag(extracted["a_cancelled"]),
    )


def _row(
    stored: tuple[Any, ...],
    usage: Mapping[str, Any] | None,
    shown: tuple[Any, ...],
    decision: str,
) -> list[Any]:
    (trace, span, parent, name, kind, start, end, status, message, run, seq) = stored
    span_kind, label, outcome, hook, offline, cancelled = shown
    return [
        trace,
        span,
        parent or None,
        name,
        kind,
        start,
        end,
        status,
        (message or "")[:STATUS_MESSAGE_CHARS],
        run,
        seq,
        span_kind,
        label,
        outcome,
        hook,
        usage and usage["input"],
        usage and usage["output"],
        offline,
        cancelled,
        usage and usage["cached"],
        usage and usage["thinking"],
        usage and usage["cost_usd"],
        decision,
    ]


def _as_stored_text(value: Any) -> Any:
    """An attribute's value as the database's JSON path gives it (``KT``): a string as it
    is, other JSON as its compact text, a number or a flag as the pages read it."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _text(value: Any) -> str:
    return "" if value is None else str(value)[:200]


def _flag(value: Any) -> bool:
    # KT gives text: SQLite's json_extract yields 1/0, PostgreSQL's ->> "true"/"false".
    return str(value).lower() in ("1", "true")


def span_count(*, session_id: str) -> int:
    """How many spans the session has stored."""
    return Span.objects.filter(session_id=session_id).count()
