"""A span version is storable whatever it carries (NUL, lone surrogates, NaN, huge depth,
overlong names), and says how much had to change; a batch with a version the database still
refuses stores the rest (isolating store)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from agentdash.agent_sessions.models import AgentSession
from agentdash.changes.models import SessionChange
from agentdash.core.hygiene import REPLACEMENT
from agentdash.spans.models import Span
from agentdash.spans.services import SpanWrite, span_upsert, spans_store_isolating
from agentdash.spans.span_version import MAX_NAME_CHARS, SpanVersion
from runtime.telemetry.attributes import AgentDash

pytestmark = pytest.mark.django_db

TRACE = "0af7651916cd43dd8448eb211c80319c"
MakeSession = Callable[[str], AgentSession]


def version(span_id: str, **extra: object) -> SpanVersion:
    fields: dict[str, object] = {"name": f"span {span_id}", "start_time": 1_000, **extra}
    return SpanVersion(trace_id=TRACE, span_id=span_id, **fields)  # type: ignore[arg-type]


def test_a_clean_version_is_kept_as_it_is() -> None:
    attributes = {"a": "b", "n": 1}
    clean = version("a" * 16, attributes=attributes)
    assert clean.attributes is attributes and AgentDash.STORAGE_REPLACED not in attributes


def test_every_string_is_made_storable_and_the_changes_counted() -> None:
    hostile = version(
        "a" * 16,
        name="tool\x00" + "n" * 300,
        status_message="failed \ud800",
        attributes={"k\ud800": "v\x00", "nan": float("nan")},
        events=[{"name": "e", "time": 1, "attributes": {"x": "\udfff"}}],
    )
    assert len(hostile.name) == MAX_NAME_CHARS and REPLACEMENT in hostile.name
    assert hostile.status_message == f"failed {REPLACEMENT}"
    assert hostile.attributes[f"k{REPLACEMENT}"] == f"v{REPLACEMENT}"
    assert hostile.attributes["nan"] == "NaN"
    assert hostile.events[0]["attributes"]["x"] == REPLACEMENT
    # name: 1 character + the cut; message 1; attributes 3; events 1
    assert hostile.attributes[AgentDash.STORAGE_REPLACED] == 7
    json.dumps(hostile.attributes, allow_nan=False).encode("utf-8")


def test_a_count_already_carried_grows() -> None:
    again = version("a" * 16, attributes={AgentDash.STORAGE_REPLACED: 2, "x": "\x00"})
    assert again.attributes[AgentDash.STORAGE_REPLACED] == 3


def test_span_upsert_stores_hostile_values(make_session: MakeSession) -> None:
    make_session("s1")
    write = span_upsert(
        trace_id=TRACE,
        span_id="b" * 16,
        name="\ud800",
        start_time=1,
        attributes={"\x00": "\ud800"},
        session_id="s1",
    )
    assert write == SpanWrite(stored=True, seq=1)
    span = Span.objects.get(span_id="b" * 16)
    assert span.name == REPLACEMENT
    assert span.attributes == {REPLACEMENT: REPLACEMENT, AgentDash.STORAGE_REPLACED: 3}


def test_a_version_the_database_refuses_is_stored_reduced_and_the_rest_whole(
    make_session: MakeSession,
) -> None:
    make_session("s1")
    make_session("s2")
    versions = [version(f"{i:016x}", session_id="s1" if i % 2 else "s2") for i in range(1, 9)]
    # JSON cannot carry an arbitrary object: this version's attributes make its batch fail.
    versions[4] = version(f"{5:016x}", session_id="s1", attributes={"bad": object()})
    writes = spans_store_isolating(versions=versions)
    assert all(write.stored for write in writes)
    reduced = Span.objects.get(span_id=f"{5:016x}")
    assert set(reduced.attributes) == {AgentDash.STORAGE_ERROR}
    assert "TypeError" in reduced.attributes[AgentDash.STORAGE_ERROR]
    assert Span.objects.count() == 8
    for session_id in ("s1", "s2"):  # every stored version is a change, seqs without holes
        seqs = SessionChange.objects.filter(session_id=session_id).values_list("seq", flat=True)
        assert sorted(seqs) == list(range(1, len(seqs) + 1)) and len(seqs) == 4


@pytest.mark.django_db(transaction=True)  # foreign keys are checked when a batch commits
def test_a_version_refused_even_reduced_is_replaced_by_an_error_span_saying_so(
    make_session: MakeSession,
) -> None:
    make_session("s1")
    versions = [
        version("a" * 16, session_id="s1"),
        version("b" * 16, session_id="s1", run_id=987_654),  # no such run, however it looks
    ]
    writes = spans_store_isolating(versions=versions)
    assert writes[0].stored and not writes[1].stored and writes[1].seq is not None
    notice = Span.objects.get(name="span not stored")
    assert (notice.session_id, notice.status, notice.seq) == (
        "s1",
        Span.Status.ERROR,
        writes[1].seq,
    )
    assert notice.attributes[AgentDash.STORAGE_DROPPED] == f"{TRACE}/{'b' * 16}"
    assert "IntegrityError" in notice.attributes[AgentDash.STORAGE_ERROR]
    assert not Span.objects.filter(span_id="b" * 16).exists()


@pytest.mark.django_db(transaction=True)  # foreign keys are checked when a batch commits
def test_a_version_refused_even_reduced_is_dropped_and_the_rest_stored(
    make_session: MakeSession, caplog: pytest.LogCaptureFixture
) -> None:
    make_session("s1")
    versions = [
        version("a" * 16, session_id="s1"),
        version("b" * 16, session_id="gone"),  # no such session: refused however it looks
        version("c" * 16, session_id="s1"),
    ]
    writes = spans_store_isolating(versions=versions)
    assert [w.stored for w in writes] == [True, False, True]
    assert set(Span.objects.values_list("span_id", flat=True)) == {"a" * 16, "c" * 16}
    assert any("dropped" in r.getMessage() for r in caplog.records)


def test_a_span_change_item_carries_the_json_its_data_was_stored_as() -> None:
    from agentdash.spans.change_items import span_change_item, span_item
    from agentdash.spans.usage import PriceBook

    version = SpanVersion(
        trace_id="a" * 32,
        span_id="b" * 16,
        name="chat ünï",
        start_time=1,
        end_time=2,
        attributes={"gen_ai.usage.input_tokens": 3, "text": "<b>😀</b>\x00"},
        events=[{"name": "e", "time": 1, "attributes": {"k": [1, 2.5, None]}}],
        session_id="s1",
    )
    prices = PriceBook([])
    item = span_change_item(7, version, prices)
    assert item == {"seq": 7, "kind": "span", "data": span_item(version, prices, seq=7)}
    assert json.loads(item.text) == item  # type: ignore[attr-defined]
    assert version.attributes_json is not None and version.attributes_json in item.text  # type: ignore[attr-defined]


def test_what_otlp_carries_is_stored_as_the_json_made_storable_once(
    make_session: MakeSession,
) -> None:
    make_session("s1")
    hostile = {"trace_state": "k=\x00ü", "links": [{"attributes": {"\ud800": 1.5}}]}
    sent = version("a" * 16, session_id="s1", otlp=hostile, end_time=2_000)
    plain = version("b" * 16, session_id="s1", end_time=2_000)
    assert sent.otlp_stored.text == json.dumps(sent.otlp, ensure_ascii=False)
    assert plain.otlp_stored.text == "{}"
    assert sent.attributes[AgentDash.STORAGE_REPLACED] == 2  # the NUL and the surrogate
    spans_store_isolating(versions=[sent, plain])
    stored = {span.span_id: span.otlp for span in Span.objects.all()}
    assert stored == {"a" * 16: sent.otlp, "b" * 16: {}}
    assert stored["a" * 16]["trace_state"] == f"k={REPLACEMENT}ü"
