"""Span versions: the final one replaces the start-time one, never the other way round."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agentdash.agent_sessions.models import AgentSession
from agentdash.changes.models import SessionChange
from agentdash.spans.models import Span
from agentdash.spans.selectors import spans_for_trace
from agentdash.spans.services import span_upsert

pytestmark = pytest.mark.django_db

TRACE = "0af7651916cd43dd8448eb211c80319c"


def started(span_id: str = "b7ad6b7169203331", **extra: object) -> dict:
    fields = {"trace_id": TRACE, "span_id": span_id, "name": "invoke_agent a"}
    return {**fields, "start_time": 1_000, "attributes": {"phase": "start"}, **extra}


def ended(span_id: str = "b7ad6b7169203331", **extra: object) -> dict:
    final = {"end_time": 5_000, "status": Span.Status.OK, "attributes": {"phase": "end"}}
    return started(span_id, **{**final, "events": [{"name": "e"}], **extra})


def test_start_then_end_replaces() -> None:
    assert span_upsert(**started()).stored
    assert span_upsert(**ended()).stored
    span = Span.objects.get()
    assert (span.end_time, span.status, span.attributes) == (5_000, "ok", {"phase": "end"})


def test_end_then_start_keeps_the_final_version() -> None:
    assert span_upsert(**ended()).stored
    write = span_upsert(**started())
    assert write == (False, None, False)  # already final: not stored again, not dropped
    span = Span.objects.get()
    assert (span.end_time, span.attributes) == (5_000, {"phase": "end"})


def test_an_ended_span_is_final() -> None:
    span_upsert(**ended())
    assert not span_upsert(**ended(status=Span.Status.ERROR)).stored
    assert Span.objects.get().status == "ok"


def test_a_second_start_snapshot_replaces_the_first() -> None:
    span_upsert(**started())
    assert span_upsert(**started(attributes={"phase": "start", "more": 1})).stored
    assert Span.objects.get().attributes == {"phase": "start", "more": 1}


def test_writes_with_a_session_get_change_seqs(
    make_session: Callable[[str], AgentSession],
) -> None:
    make_session("s1")
    first = span_upsert(**started(session_id="s1"))
    second = span_upsert(**ended(session_id="s1"))
    ignored = span_upsert(**started(session_id="s1"))
    assert (first.seq, second.seq, ignored.seq) == (1, 2, None)
    assert Span.objects.get().seq == 2
    changes = list(SessionChange.objects.values_list("seq", "kind", "ref"))
    assert changes == [
        (1, "span", f"{TRACE}:b7ad6b7169203331"),
        (2, "span", f"{TRACE}:b7ad6b7169203331"),
    ]


def test_spans_for_trace_in_start_order() -> None:
    span_upsert(**started("2222222222222222", start_time=3_000))
    span_upsert(**started("1111111111111111", start_time=2_000))
    span_upsert(**{**started("3333333333333333"), "trace_id": "f" * 32})
    assert [s.span_id for s in spans_for_trace(trace_id=TRACE)] == [
        "1111111111111111",
        "2222222222222222",
    ]


def test_a_runs_spans_are_read_through_the_run_index() -> None:
    """The run index holds only spans of a run (an ingested span has none, and is written to
    one index less): reads by run still go through it, on either database."""
    from django.db import connection

    explain = "EXPLAIN QUERY PLAN " if connection.vendor == "sqlite" else "EXPLAIN "
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL enable_seqscan = off")  # a few rows: it would scan them
        for query in (Span.objects.filter(run_id=5), Span.objects.filter(run_id__in=[1, 2])):
            sql, params = query.query.sql_with_params()
            cursor.execute(explain + sql, params)
            plan = " ".join(str(row) for row in cursor.fetchall())
            assert "span_run" in plan, plan


def test_which_spans_are_stored_is_read_exactly_in_chunks(
    make_session: Callable[[str], AgentSession], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``spans_stored`` answers for exactly the identities asked (a span id of one trace asked
    with another trace is not that span), with each one's session and end, however many are
    asked (a statement per chunk), held or not."""
    from django.db import transaction

    from agentdash.spans import selectors
    from agentdash.spans.selectors import StoredSpan, spans_stored

    make_session("s1")
    one, two = "1" * 32, "2" * 32
    span_upsert(trace_id=one, span_id="a" * 16, name="a", start_time=1, end_time=2,
                session_id="s1")  # fmt: skip
    span_upsert(trace_id=one, span_id="b" * 16, name="b", start_time=1)
    span_upsert(trace_id=two, span_id="c" * 16, name="c", start_time=1, end_time=3)
    asked = [(one, "a" * 16), (one, "b" * 16), (two, "c" * 16), (two, "a" * 16),
             (one, "c" * 16), (one, "d" * 16)]  # fmt: skip
    expected = {
        (one, "a" * 16): StoredSpan("s1", 2),
        (one, "b" * 16): StoredSpan(None, None),
        (two, "c" * 16): StoredSpan(None, 3),
    }
    assert spans_stored(identities=asked) == expected
    monkeypatch.setattr(selectors, "STORED_PER_QUERY", 2)
    assert spans_stored(identities=asked) == expected
    with transaction.atomic():
        assert spans_stored(identities=asked, lock=True) == expected
    assert spans_stored(identities=[]) == {}
