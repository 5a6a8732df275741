"""A span's summary is computed once: the row of a summary page (read by the database's JSON
paths) and the ``summary`` a live ``span`` change carries (read from the span in memory, as it
is stored and as it is read back) are the same values, field by field, for every kind of span
and every display field — here and on PostgreSQL (DATABASE_MODULES)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.core.serializers.json import DjangoJSONEncoder

from agentdash.agent_sessions.models import AgentSession
from agentdash.changes.items import item_json
from agentdash.spans.change_items import span_change_item, span_trimmed, spans_load
from agentdash.spans.models import Span
from agentdash.spans.services import spans_store
from agentdash.spans.span_version import SpanVersion
from agentdash.spans.summaries import SUMMARY_FIELDS, span_summaries
from agentdash.spans.totals import price_book

pytestmark = pytest.mark.django_db

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SPANS: list[tuple[str, dict[str, Any]]] = [
    ("invoke_agent shopper", {"gen_ai.agent.name": "shopper", "agentdash.span.kind": "agent"}),
    (
        "generate_content gemini-2.5-flash",
        {
            "agentdash.span.kind": "model",
            "gen_ai.request.model": "gemini-2.5-flash",
            "gen_ai.usage.input_tokens": 1200,
            "gen_ai.usage.output_tokens": 80,
            "agentdash.model.offline": True,
        },
    ),
    ("execute_tool find", {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "find"}),
    (
        "callback before_tool",
        {
            "agentdash.span.kind": "callback",
            "agentdash.callback.name": "pii_screen",
            "agentdash.callback.hook": "before_tool",
            "agentdash.callback.outcome": "overridden",
            "agentdash.guardrail.decision": "blocked",
            "agentdash.cancelled": True,
        },
    ),
    ("execute_tool lookup", {"agentdash.span.kind": "tool", "gen_ai.tool.name": 42}),
    ("invoke_agent guessed", {}),  # no kind: guessed from the name
    ("something else", {"agentdash.span.kind": "not-ours", "agentdash.callback.hook": ["a"]}),
]


def versions() -> list[SpanVersion]:
    return [
        SpanVersion(
            trace_id=TRACE,
            span_id=f"{i + 1:016x}",
            parent_span_id="" if i == 0 else f"{1:016x}",
            name=name,
            start_time=1_700_000_000_000_000_000 + i,
            end_time=None if i == 2 else 1_700_000_000_500_000_000 + i,
            status="error" if i == 3 else "ok",
            status_message="x" * 700 if i == 3 else "",
            session_id="parity",
            attributes=attributes,
        )
        for i, (name, attributes) in enumerate(SPANS)
    ]


def wire(value: Any) -> Any:
    """``value`` as a client gets it: JSON, as the views and the socket send it."""
    return json.loads(json.dumps(value, cls=DjangoJSONEncoder))


def test_the_live_summary_is_the_pages_row(make_session: Callable[[str], AgentSession]) -> None:
    make_session("parity")
    stored = versions()
    writes = spans_store(versions=stored)
    page = [dict(zip(SUMMARY_FIELDS, row, strict=True)) for row in span_summaries(
        session_id="parity").rows]  # fmt: skip
    assert len(page) == len(SPANS)
    kinds = [row["span_kind"] for row in page]
    assert kinds == ["agent", "model", "tool", "callback", "tool", "agent", ""]
    prices = price_book()
    # As the flush sends them: the version just stored, with the seq it got.
    sent = {
        v.span_id: json.loads(item_json(span_change_item(w.seq, v, prices)))["data"]["summary"]
        for v, w in zip(stored, writes, strict=True)
        if w.seq is not None
    }
    # As a client catching up reads them: the rows, and a change too large to send whole.
    rows = Span.objects.filter(session_id="parity")
    refs = {("parity", f"{r.trace_id}:{r.span_id}") for r in rows}
    loaded = {ref.split(":")[1]: item["summary"] for (_, ref), item in spans_load(refs).items()}
    page = [wire(row) for row in page]
    for row in page:
        span_id = row["span_id"]
        assert sent[span_id] == row, span_id
        assert wire(loaded[span_id]) == row, span_id
        assert wire(span_trimmed({"summary": loaded[span_id]})["summary"]) == row
