"""Spans as change items (kind ``span``): registered with the change log by ``SpansConfig``."""

from __future__ import annotations

import json
from typing import Any

from agentdash.changes.items import EncodedItem, Item, RowKey, items_of_rows
from agentdash.core.prepared import PreparedQuery
from agentdash.spans.models import Span
from agentdash.spans.span_version import SpanVersion
from agentdash.spans.summaries import span_summary
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
    """The change item of ``version`` stored with ``seq``: encoded with the JSON its
    attributes and events were stored as (not encoded a second time), when it has it."""
    data = span_item(version, prices, seq=seq)
    item = {"seq": seq, "kind": "span", "data": data}
    text = span_data_json(data, version)
    if text is None:
        return item
    return EncodedItem(item, f'{{"seq": {seq}, "kind": "span", "data": {text}}}')


def span_data_json(data: dict[str, Any], version: SpanVersion) -> str | None:
    """``data`` (``span_item`` of ``version``) as JSON, made with the JSON the version's
    attributes and events were made storable as; ``None`` when it has none."""
    attributes, events = version.attributes_json, version.events_json
    if attributes is None or events is None:
        return None
    rest = {k: v for k, v in data.items() if k not in ("attributes", "events")}
    text = json.dumps(rest, ensure_ascii=False)
    return f'{text[:-1]}, "attributes": {attributes}, "events": {events}}}'


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
