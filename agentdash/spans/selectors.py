"""Reads of the span store: a trace's spans, a session's spans."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from typing import Any, NamedTuple

from django.db import connection
from django.db.models import OuterRef, Q, QuerySet
from django.db.models.fields.json import KT

from agentdash.spans.change_items import span_item
from agentdash.spans.models import Span
from agentdash.spans.sources import source_item
from runtime.telemetry.attributes import AgentDash, GenAI

STORED_PER_QUERY = 2_000
"""Span ids looked up in one query by :func:`spans_stored` (an OTLP request can carry more
spans: each statement stays bounded)."""


class StoredSpan(NamedTuple):
    session_id: str | None
    end_time: int | None


def spans_stored(
    *, identities: Collection[tuple[str, str]], lock: bool = False
) -> dict[tuple[str, str], StoredSpan]:
    """Which of the spans ``(trace id, span id)`` are stored, with their session and end.
    ``lock``: their rows stay held until the transaction ends (PostgreSQL's ``FOR NO KEY
    UPDATE``; SQLite holds the whole database while a transaction writes). In SQL of its
    own: the ORM's cost of a query with a long ``IN`` list was a tenth of an OTLP batch's
    ingest (docs/BENCHMARKS.md)."""
    wanted = sorted(set(identities))
    quote = connection.ops.quote_name
    table = quote(Span._meta.db_table)
    columns = ", ".join(
        quote(field.column)
        for field in (
            Span.trace_id.field,
            Span.span_id.field,
            Span.session.field,
            Span.end_time.field,
        )
    )
    held = ""
    if lock and connection.features.has_select_for_update:
        no_key = connection.features.has_select_for_no_key_update
        held = " FOR NO KEY UPDATE" if no_key else " FOR UPDATE"
    # Each list of ids one parameter (a JSON array on SQLite, an array on PostgreSQL): not
    # hundreds of parameters to bind, nor for DEBUG's query log to quote one by one.
    sqlite = connection.vendor == "sqlite"
    among = "IN (SELECT value FROM json_each(%s))" if sqlite else "= ANY(%s)"
    found: dict[tuple[str, str], StoredSpan] = {}
    with connection.cursor() as cursor:
        for start in range(0, len(wanted), STORED_PER_QUERY):
            chunk = wanted[start : start + STORED_PER_QUERY]
            traces = sorted({trace_id for trace_id, _ in chunk})
            spans = sorted({span_id for _, span_id in chunk})
            cursor.execute(
                f"SELECT {columns} FROM {table} WHERE {quote('trace_id')} {among} "
                f"AND {quote('span_id')} {among}{held}",
                [json.dumps(traces), json.dumps(spans)] if sqlite else [traces, spans],
            )
            for trace_id, span_id, session_id, end_time in cursor.fetchall():
                found[(trace_id, span_id)] = StoredSpan(session_id, end_time)
    chosen = set(wanted)  # the query's cross product may find other pairs of these ids
    return {identity: span for identity, span in found.items() if identity in chosen}


def spans_for_trace(*, trace_id: str) -> QuerySet[Span]:
    """The trace's spans in start order (ties by id, i.e. first stored first)."""
    return Span.objects.filter(trace_id=trace_id).order_by("start_time", "id")


def spans_for_session(*, session_id: str) -> QuerySet[Span]:
    """The session's spans in start order."""
    return Span.objects.filter(session_id=session_id).order_by("start_time", "id")


EXPORT_BATCH = 1_000

_ITEM_FIELDS = (
    "trace_id",
    "span_id",
    "parent_span_id",
    "name",
    "kind",
    "start_time",
    "end_time",
    "status",
    "status_message",
    "attributes",
    "events",
    "run_id",
    "otlp",
    "source_id",
)


def spans_batched(
    *, session_id: str, trace_id: str | None = None, batch: int = EXPORT_BATCH
) -> Iterator[list[dict[str, Any]]]:
    """The session's spans (only those of ``trace_id`` when given) in start order, ties by
    id, ``batch`` at a time, each as stored (the fields of a ``span`` change's data from the
    span's own columns: ids, name, kind, times, status, attributes, events, run id): one
    query per batch, resuming after the last span of the batch before. A span's start never changes,
    so every span stored before its batch is read comes exactly once, however the session
    grows meanwhile; only one batch is held at a time."""
    if batch < 1:
        raise ValueError("batch must be at least 1")
    rows = Span.objects.filter(session_id=session_id)
    if trace_id is not None:
        rows = rows.filter(trace_id=trace_id)
    after: tuple[int, int] | None = None
    while True:
        page = rows
        if after is not None:
            start, pk = after
            page = rows.filter(Q(start_time__gt=start) | Q(start_time=start, id__gt=pk))
        found = list(page.order_by("start_time", "id").values("id", *_ITEM_FIELDS)[:batch])
        if not found:
            return
        after = (found[-1]["start_time"], found[-1]["id"])
        for span in found:
            del span["id"]
            span["parent_span_id"] = span["parent_span_id"] or None
        yield found
        if len(found) < batch:
            return


def session_has_trace(*, session_id: str, trace_id: str) -> bool:
    """Whether the session has a span of the trace."""
    return Span.objects.filter(session_id=session_id, trace_id=trace_id).exists()


def span_detail(*, session_id: str, trace_id: str, span_id: str) -> dict[str, Any] | None:
    """One span of the session as a ``span`` change sends it, plus ``seq`` (the change that
    last wrote it); ``None`` when the session has no such span."""
    row = (
        Span.objects.filter(session_id=session_id, trace_id=trace_id, span_id=span_id)
        .select_related("source")
        .first()
    )
    if row is None:
        return None
    found = {**span_item(row), "seq": row.seq}
    if row.source is not None:
        found["source"] = source_item(row.source)
    return found


def link_sessions(*, links: list[Any]) -> dict[tuple[str, str], str]:
    """The sessions of the stored spans that ``links`` (OTLP links as ``Span.otlp`` keeps
    them: ``traceId``, ``spanId``) point at: (trace id, span id) → session id."""
    wanted = {
        (str(link.get("traceId")), str(link.get("spanId")))
        for link in links
        if isinstance(link, dict)
    }
    if not wanted:
        return {}
    rows = Span.objects.filter(
        trace_id__in={t for t, _ in wanted},
        span_id__in={s for _, s in wanted},
        session__isnull=False,
    ).values_list("trace_id", "span_id", "session_id")
    return {(t, s): session for t, s, session in rows if (t, s) in wanted}


def tool_call_spans(*, session_id: str, call_ids: set[str]) -> dict[str, tuple[str, str]]:
    """The ``execute_tool`` spans of the session's tool calls ``call_ids``: call id →
    (trace id, span id); the latest span when a call ran more than once (asked, then run)."""
    if not call_ids:
        return {}
    rows = (
        Span.objects.filter(session_id=session_id, name__startswith="execute_tool")
        .filter(**{f"attributes__{GenAI.TOOL_CALL_ID}__in": sorted(call_ids)})
        .annotate(call_id=KT(f"attributes__{GenAI.TOOL_CALL_ID}"))
        .order_by("start_time", "id")
        .values_list("call_id", "trace_id", "span_id")
    )
    return {call_id: (trace_id, span_id) for call_id, trace_id, span_id in rows}


def spans_ended(*, identities: Collection[tuple[str, str]]) -> dict[tuple[str, str], Span]:
    """The stored spans of ``identities`` that have ended (their final version)."""
    if not identities:
        return {}
    wanted = set(identities)
    rows = Span.objects.filter(
        trace_id__in={t for t, _ in wanted}, span_id__in={s for _, s in wanted},
        end_time__isnull=False,
    )  # fmt: skip
    return {(r.trace_id, r.span_id): r for r in rows if (r.trace_id, r.span_id) in wanted}


def running_tool_spans(*, session_id: str, tools: set[str]) -> dict[str, tuple[str, str]]:
    """The latest running ``execute_tool <name>`` span of each of these tools in the session:
    tool → (trace id, span id). A sender that names the call only when it ends (ADK) is found
    so while its tool call waits."""
    if not tools:
        return {}
    rows = (
        Span.objects.filter(session_id=session_id, end_time__isnull=True)
        .filter(name__in=[f"execute_tool {tool}" for tool in sorted(tools)])
        .order_by("start_time", "id")
        .values_list("name", "trace_id", "span_id")
    )
    return {name.removeprefix("execute_tool "): (trace, span) for name, trace, span in rows}


# ── reads for the pages (dashboard/) ──────────────────────────────────────────────────────
def trace_invocations(*, session_id: str) -> dict[str, Any]:
    """Each trace of the session → the invocation id its root span carries (``None`` when
    it carries none): how spans of no run find their turn."""
    roots = Span.objects.filter(session_id=session_id, parent_span_id="")
    found = roots.annotate(inv=KT(f"attributes__{AgentDash.INVOCATION_ID}"))
    return dict(found.values_list("trace_id", "inv"))


def runs_with_root(*, session_id: str, run_ids: Collection[int]) -> set[int]:
    """Those of ``run_ids`` that have a root span in the session."""
    roots = Span.objects.filter(session_id=session_id, parent_span_id="", run_id__in=run_ids)
    return set(roots.values_list("run_id", flat=True).distinct())


def spans_of_outer_session(*, errors_only: bool = False) -> QuerySet[Span]:
    """For annotating sessions: the spans of each (``OuterRef("pk")``), or only those that
    ended in an error."""
    spans = Span.objects.filter(session_id=OuterRef("pk"))
    return spans.filter(status=Span.Status.ERROR) if errors_only else spans
