"""The batch span write: span_upsert's rules, many spans in one transaction."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.db import IntegrityError

from agentdash.agent_sessions.models import AgentSession
from agentdash.changes.models import SessionChange
from agentdash.spans import services
from agentdash.spans.models import Span
from agentdash.spans.services import SpanWrite, span_upsert, spans_store
from agentdash.spans.span_version import SpanVersion

pytestmark = pytest.mark.django_db

TRACE = "0af7651916cd43dd8448eb211c80319c"
MakeSession = Callable[[str], AgentSession]


def version(span_id: str, *, end: int | None = None, **extra: object) -> SpanVersion:
    return SpanVersion(
        trace_id=TRACE,
        span_id=span_id,
        name=f"span {span_id}",
        start_time=1_000,
        end_time=end,
        **extra,  # type: ignore[arg-type]
    )


def test_a_batch_gets_contiguous_seqs_per_session(make_session: MakeSession) -> None:
    make_session("s1")
    make_session("s2")
    span_upsert(trace_id=TRACE, span_id="0" * 16, name="earlier", start_time=1, session_id="s1")
    writes = spans_store(
        versions=[
            version("a" * 16, session_id="s1"),
            version("b" * 16, session_id="s2"),
            version("c" * 16, session_id="s1", end=9),
            version("d" * 16),
        ]
    )
    assert [w[:2] for w in writes] == [(True, 2), (True, 1), (True, 3), (True, None)]
    changes = SessionChange.objects.order_by("session_id", "seq")
    assert [(c.session_id, c.seq, c.ref) for c in changes] == [
        ("s1", 1, f"{TRACE}:{'0' * 16}"),
        ("s1", 2, f"{TRACE}:{'a' * 16}"),
        ("s1", 3, f"{TRACE}:{'c' * 16}"),
        ("s2", 1, f"{TRACE}:{'b' * 16}"),
    ]
    assert Span.objects.get(span_id="c" * 16).seq == 3


def test_an_open_span_is_replaced_and_an_ended_one_is_final(make_session: MakeSession) -> None:
    make_session("s1")
    spans_store(versions=[version("a" * 16, session_id="s1"), version("b" * 16, session_id="s1")])
    writes = spans_store(
        versions=[
            version("a" * 16, session_id="s1", end=5, status="ok", attributes={"x": 1}),
            version("b" * 16, session_id="s1", end=6, status="error", status_message="boom"),
        ]
    )
    assert [w[:2] for w in writes] == [(True, 3), (True, 4)]
    a, b = Span.objects.order_by("span_id")
    assert (a.end_time, a.status, a.attributes, a.seq) == (5, "ok", {"x": 1}, 3)
    assert (b.status, b.status_message) == ("error", "boom")
    # Later versions of a final span are ignored; the others in the batch still go in.
    writes = spans_store(
        versions=[version("a" * 16, session_id="s1"), version("e" * 16, session_id="s1", end=1)]
    )
    assert writes == [SpanWrite(False, None), SpanWrite(True, 5)]
    assert Span.objects.get(span_id="a" * 16).end_time == 5


def test_versions_of_one_span_in_a_batch_coalesce(make_session: MakeSession) -> None:
    make_session("s1")
    writes = spans_store(
        versions=[
            version("a" * 16, session_id="s1"),
            version("a" * 16, session_id="s1", end=5),
            version("a" * 16, session_id="s1"),  # a late start never undoes the end
        ]
    )
    assert [w[:2] for w in writes] == [(True, 1)]
    assert Span.objects.get().end_time == 5
    assert SessionChange.objects.count() == 1


def test_a_batch_that_loses_a_race_is_redone_span_by_span(
    make_session: MakeSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_session("s1")
    SessionChange.objects.create(session_id="s1", seq=1, kind="run", ref="9")

    def racing(*args: object) -> list[SpanWrite]:
        raise IntegrityError("seq 1 taken")  # as when another writer committed it meanwhile

    monkeypatch.setattr(services, "_store_batch", racing)
    writes = spans_store(versions=[version("a" * 16, session_id="s1", end=2)])
    assert [w[:2] for w in writes] == [(True, 2)]
    assert Span.objects.get().seq == 2


def test_a_seq_written_around_the_counter_makes_the_batch_redo_span_by_span(
    make_session: MakeSession,
) -> None:
    make_session("s1")
    SessionChange.objects.create(session_id="s1", seq=1, kind="run", ref="9")  # counter at 0
    writes = spans_store(
        versions=[version("a" * 16, session_id="s1"), version("b" * 16, session_id="s1", end=2)]
    )
    assert [w[:2] for w in writes] == [(True, 2), (True, 3)]
    assert list(Span.objects.order_by("span_id").values_list("seq", flat=True)) == [2, 3]


def test_a_batch_stores_what_span_upsert_stores(make_session: MakeSession) -> None:
    make_session("s1")
    carried = {
        "attributes": {
            "gen_ai.usage.input_tokens": 12,
            "gen_ai.usage.output_tokens": 3,
            "gen_ai.response.model": "gemini-2.5-flash",
            "nested": {"list": [1, 2.5, None, True], "text": "Montréal ✓"},
        },
        "events": [{"name": "e", "time": 5, "attributes": {"k": "v"}}],
        "kind": "client",
        "status": "error",
        "status_message": "boom",
        "parent_span_id": "f" * 16,
        "session_id": "s1",
    }
    span_upsert(trace_id=TRACE, span_id="a" * 16, name="n", start_time=1_000, end_time=2, **carried)
    spans_store(versions=[version("b" * 16, end=2, **carried)])  # type: ignore[arg-type]
    spans_store(versions=[version("c" * 16, **carried)])  # type: ignore[arg-type]
    spans_store(versions=[version("c" * 16, end=2, **carried)])  # type: ignore[arg-type]
    fields = [f.attname for f in Span._meta.concrete_fields if f.name not in ("id", "span_id")]
    rows = Span.objects.order_by("span_id").values(*fields)
    upserted, inserted, updated = ({**row, "name": "n", "seq": 0} for row in rows)
    assert inserted == upserted == updated
    assert upserted["tokens_in"] == 12 and upserted["attributes"] == carried["attributes"]
    assert Span.objects.filter(attributes__nested__text="Montréal ✓").count() == 3


def test_a_span_of_no_session_stored_meanwhile_is_not_overwritten(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    span_upsert(trace_id=TRACE, span_id="a" * 16, name="first", start_time=1, end_time=2)
    # The batch does not see it (as if another writer committed it after the batch's read):
    # its plain insert collides, and the span-by-span redo finds it final.
    monkeypatch.setattr(Span.objects, "select_for_update", lambda **kw: Span.objects.none())
    assert spans_store(versions=[version("a" * 16, end=3)]) == [(False, None, False)]
    assert Span.objects.get().name == "first"
