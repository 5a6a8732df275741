"""Spans as change items (kind ``span``): registered with the change log by ``SpansConfig``."""

from __future__ import annotations

import json
import math
from typing import Any

from agentdash.changes.items import EncodedItem, Item, RowKey, items_of_rows
from agentdash.core.prepared import PreparedQuery
from agentdash.spans.models import Span
from agentdash.spans.span_version import SpanVersion
from agentdash.spans.summaries import (
    SHOWN,
    SPAN_HEAD,
    STATUS_MESSAGE_CHARS,
    span_summary,
    summary_of,
    summary_shown,
)
from agentdash.spans.totals import price_book
from agentdash.spans.usage import USAGE_COLUMNS, PriceBook, span_usage


def span_item(
    span: Span | SpanVersion, prices: PriceBook | None = None, *, seq: int | None = None
) -> Item:
    """The ``data`` of a ``span`` change: the span's stored (latest) version (a row, or the
    version just stored with ``seq``), with its ``usage`` when it is a model call (``None``
    otherwise; costed from ``prices``, else from the price table read now) and its
    ``summary``: the row the session's summary pages have for it (``spans.summaries``).
    A span sent from outside has ``source_id`` (its resource and scope: ``spans.sources``)
    and, in ``otlp``, what OTLP carries beyond the columns (flags, trace state, links, the
    sender's dropped counts); the runtime's own spans have ``None`` and ``{}``."""
    columns = {column: getattr(span, column) for column in USAGE_COLUMNS}
    usage = span_usage(columns, prices or price_book())
    stored_seq = getattr(span, "seq", None) if seq is None else seq
    return {
        "trace_id": span.trace_id,
        "span_id": span.span_id,
        "parent_span_id": span.parent_span_id or None,
        "name": span.name,
        "kind": span.kind,
        "start_time": span.start_time,
        "end_time": span.end_time,
        "status": span.status,
        "status_message": span.status_message,
        "attributes": span.attributes,
        "events": span.events,
        "run_id": span.run_id,
        "otlp": span.otlp,
        "source_id": span.source_id,
        "usage": usage,
        "summary": span_summary(span, seq=stored_seq or 0, usage=usage),
    }


def span_change_item(seq: int, version: SpanVersion, prices: PriceBook) -> Item:
    """The change item of ``version`` stored with ``seq``, with its JSON text when it has it
    (:func:`span_version_data`)."""
    data, text = span_version_data(seq, version, prices)
    item = {"seq": seq, "kind": "span", "data": data}
    if text is None:
        return item
    return EncodedItem(item, f'{{"seq": {seq}, "kind": "span", "data": {text}}}')


def span_version_data(seq: int, version: SpanVersion, prices: PriceBook) -> tuple[Item, str | None]:
    """The ``data`` of ``version``'s change (:func:`span_item`) stored with ``seq``, and its
    JSON — made with the JSON its attributes and events were stored as (not encoded a second
    time) and with what depends on the version alone made once (:func:`item_fixed`); ``None``
    when it has no stored JSON."""
    fixed, summary_fixed, shown = item_fixed(version)
    columns = {column: getattr(version, column) for column in USAGE_COLUMNS}
    usage = span_usage(columns, prices)
    summary = summary_of(version, shown, seq=seq, usage=usage)
    data = {
        "trace_id": version.trace_id,
        "span_id": version.span_id,
        "parent_span_id": version.parent_span_id or None,
        "name": version.name,
        "kind": version.kind,
        "start_time": version.start_time,
        "end_time": version.end_time,
        "status": version.status,
        "status_message": version.status_message,
        "attributes": version.attributes,
        "events": version.events,
        "run_id": version.run_id,
        "otlp": version.otlp,
        "source_id": version.source_id,
        "usage": usage,
        "summary": summary,
    }
    attributes, events = version.attributes_json, version.events_json
    if attributes is None or events is None:
        return data, None
    usage_json = "null" if usage is None else _encoded(usage)
    run, source = _scalar(version.run_id), _scalar(version.source_id)
    summary_placed = ", ".join(f'"{k}": {_scalar(summary[k])}' for k in _SUMMARY_PLACED)
    text = (
        f'{{{fixed}, "run_id": {run}, "source_id": {source}, "usage": {usage_json}, '
        f'"attributes": {attributes}, "events": {events}, '
        f'"summary": {{{summary_fixed}, {summary_placed}}}}}'
    )
    return data, text


def _scalar(value: Any) -> str:
    """The JSON of a number or ``None`` (what a change's placed fields hold) without the
    encoder's cost per call; anything else through it."""
    if value is None:
        return "null"
    if type(value) is int:
        return str(value)
    if type(value) is float and math.isfinite(value):
        return repr(value)
    return _encoded(value)


# One encoder for every call (``json.dumps`` with arguments makes one per call).
_encoded = json.JSONEncoder(ensure_ascii=False).encode

# A summary's fields that depend on where and when the span is stored, and at what price.
_SUMMARY_PLACED = (
    "run_id",
    "seq",
    "tokens_in",
    "tokens_out",
    "tokens_cached",
    "tokens_thinking",
    "cost_usd",
)


def item_fixed(version: SpanVersion) -> tuple[str, str, tuple[Any, ...]]:
    """What ``version``'s change item holds that depends on the version alone — not on its
    session, run, source, seq or prices: the JSON members (no braces) of those fields of
    its ``data`` (less attributes and events, kept as stored) and of its ``summary``, and
    what the summary reads out of the attributes (``summaries.summary_shown``). Made once
    and kept with the version (:attr:`SpanVersion.memo`): an ingest decoding process makes it
    before the version is stored elsewhere."""
    made = version.memo.get("item")
    if made is None:
        shown = summary_shown(version)
        # The fields the data and the summary both begin with, encoded once for both (the
        # summary cuts a long status message: then its own).
        common = {name: getattr(version, name) for name in SPAN_HEAD}
        common["parent_span_id"] = common["parent_span_id"] or None
        both = _encoded(common)[1:-1]
        own = both
        if len(version.status_message) > STATUS_MESSAGE_CHARS:
            common["status_message"] = version.status_message[:STATUS_MESSAGE_CHARS]
            own = _encoded(common)[1:-1]
        rest = {**dict(zip(SHOWN, shown, strict=True)), "decision": version.decision}
        made = (
            f'{both}, "otlp": {version.otlp_json or _encoded(version.otlp)}',
            f"{own}, {_encoded(rest)[1:-1]}",
            shown,
        )
        version.memo["item"] = made
    return made


_SPANS: PreparedQuery[Span] = PreparedQuery(
    lambda session_ids, trace_ids, span_ids: Span.objects.filter(
        session_id__in=session_ids, trace_id__in=trace_ids, span_id__in=span_ids
    )
)


def spans_load(refs: set[RowKey]) -> dict[RowKey, Item]:
    """The data of the spans named ``(session id, "trace:span")``, in one query."""
    if not refs:
        return {}
    ids = {tuple(ref.split(":", 1)) for _, ref in refs}
    rows = _SPANS.rows(
        sorted({s for s, _ in refs}), sorted({t for t, *_ in ids}), sorted({s for *_, s in ids})
    )
    prices = price_book()
    return items_of_rows(
        refs,
        rows,
        session_of=lambda row: row.session_id or "",  # of no session: matches no ref
        ref_of=lambda row: f"{row.trace_id}:{row.span_id}",
        item_of=lambda row: span_item(row, prices),
    )


def span_trimmed(data: dict[str, Any]) -> dict[str, Any]:
    """A span too large to send whole keeps its identity, timing and status, not its
    attributes and events."""
    return {**data, "attributes": {"agentdash.truncated": True}, "events": []}
