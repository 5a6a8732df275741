"""The span processor alone (a private tracer provider, no database): what it keeps, whose
session a span belongs to, and how versions of one span coalesce."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer

from agentdash.spans.span_processor import LiveSpanProcessor
from runtime.telemetry.attributes import AgentDash, GenAI

SESSION = {GenAI.CONVERSATION_ID: "s1", AgentDash.INVOCATION_ID: "inv-1"}


@pytest.fixture
def wakes() -> list[int]:
    return []


@pytest.fixture
def processor(wakes: list[int]) -> LiveSpanProcessor:
    found = LiveSpanProcessor(batch_size=3, wake=lambda: wakes.append(1))
    found.enabled = True
    return found


@pytest.fixture
def tracer(processor: LiveSpanProcessor) -> Iterator[Tracer]:
    provider = TracerProvider()
    provider.add_span_processor(processor)
    yield provider.get_tracer("test")
    provider.shutdown()


def test_a_started_span_is_kept_open_then_replaced_by_its_end(
    processor: LiveSpanProcessor, tracer: Tracer
) -> None:
    span = tracer.start_span("invoke_agent a", attributes=SESSION, kind=SpanKind.CLIENT)
    span.set_attribute("later", 1)
    (started,) = processor.take(10)
    version = started.version(session_id="s1", run_id=7)
    assert (version.end_time, version.status, version.events) == (None, "unset", [])
    assert version.attributes == SESSION  # what it had at start, not what came later
    assert (version.kind, version.run_id, version.session_id) == ("client", 7, "s1")
    assert len(version.trace_id) == 32 and len(version.span_id) == 16
    assert version.parent_span_id == ""

    span.add_event("retry", {"attempt": (1, 2)})
    span.set_status(Status(StatusCode.ERROR, "boom"))
    span.end()
    (ended,) = processor.take(10)
    final = ended.version(session_id="s1", run_id=None)
    assert final.end_time is not None and final.end_time >= final.start_time
    assert (final.status, final.status_message) == ("error", "boom")
    assert final.attributes == {**SESSION, "later": 1}
    assert final.events[0]["name"] == "retry"
    assert final.events[0]["attributes"] == {"attempt": [1, 2]}


def test_a_snapshot_made_into_a_version_twice_for_one_owner_is_made_once(
    processor: LiveSpanProcessor, tracer: Tracer
) -> None:
    """The previews and the flusher often ask for the same version (a span ended before its
    preview went out): made storable once, for as long as the owner asked is the same."""
    span = tracer.start_span("call", attributes={**SESSION, "big": "x" * 1000})
    span.end()
    (ended,) = processor.take(10)
    first = ended.version(session_id="s1", run_id=7)
    assert ended.version(session_id="s1", run_id=7) is first
    other = ended.version(session_id="s1", run_id=None)  # another owner: another version
    assert other is not first and other.run_id is None and other.attributes == first.attributes
    assert ended.version(session_id="s1", run_id=None) is other


def test_versions_of_one_span_coalesce_and_an_end_is_final(
    processor: LiveSpanProcessor, tracer: Tracer
) -> None:
    with tracer.start_as_current_span("a", attributes=SESSION):
        assert processor.pending_count() == 1
    assert processor.pending_count() == 1
    (only,) = processor.take(10)
    assert only.ended
    # A start snapshot put back after a failed write never hides the end that came meanwhile.
    span = tracer.start_span("b", attributes=SESSION)
    (start,) = processor.take(10)
    span.end()
    processor.restore([start])
    (kept,) = processor.take(10)
    assert kept.ended
    # Nor does a start snapshot that comes late (say, from another thread) replace an end.
    span = tracer.start_span("c", attributes=SESSION)
    span.end()
    processor.on_start(span)  # type: ignore[arg-type]
    (kept,) = processor.take(10)
    assert kept.ended


def test_children_inherit_the_session_and_nested_sessions_fall_back(
    processor: LiveSpanProcessor, tracer: Tracer
) -> None:
    with tracer.start_as_current_span("invocation", attributes=SESSION):
        with tracer.start_as_current_span("callback guard"):
            pass
        inner = {GenAI.CONVERSATION_ID: "private", AgentDash.INVOCATION_ID: "inv-2"}
        with (
            tracer.start_as_current_span("invoke_agent tool_agent", attributes=inner),
            tracer.start_as_current_span("generate_content m"),
        ):
            pass
    found = {s.span.name: s for s in processor.take(10)}
    assert found["callback guard"].sessions == ("s1",)
    assert found["callback guard"].invocations == ("inv-1",)
    assert found["generate_content m"].sessions == ("private", "s1")
    assert found["generate_content m"].invocations == ("inv-2", "inv-1")
    guard = found["callback guard"].version(session_id="s1", run_id=None)
    parent = found["invocation"].version(session_id="s1", run_id=None)
    assert guard.parent_span_id == parent.span_id


def test_spans_of_no_session_and_a_disabled_processor_keep_nothing(
    processor: LiveSpanProcessor, tracer: Tracer
) -> None:
    with tracer.start_as_current_span("django request"), tracer.start_as_current_span("child"):
        pass
    assert processor.pending_count() == 0
    processor.enabled = False
    with tracer.start_as_current_span("a", attributes=SESSION):
        pass
    assert processor.pending_count() == 0


def test_the_flusher_is_woken_by_the_first_snapshot_and_by_a_full_batch(
    processor: LiveSpanProcessor, tracer: Tracer, wakes: list[int]
) -> None:
    for i in range(5):
        with tracer.start_as_current_span(f"s{i}", attributes=SESSION):
            pass
    assert len(wakes) == 2  # the first snapshot, then the third (batch_size)
    assert len(processor.take(2)) == 2  # three still wait: a full batch, already announced
    assert len(wakes) == 2
    assert len(processor.take(1)) == 1  # two wait: not full, but the flusher knows of them
    with tracer.start_as_current_span("u", attributes=SESSION):
        pass
    assert len(wakes) == 3  # full again
    assert len(processor.take(10)) == 3
    for i in range(3):
        with tracer.start_as_current_span(f"t{i}", attributes=SESSION):
            pass
    assert len(wakes) == 5


def test_an_invocation_waits_until_its_taken_snapshots_are_stored(
    processor: LiveSpanProcessor, tracer: Tracer
) -> None:
    with tracer.start_as_current_span("step", attributes=SESSION):  # of invocation inv-1
        pass
    assert processor.waiting_for("inv-1") and not processor.waiting_for("inv-2")
    taken = processor.take(10)
    assert processor.pending_count() == 0
    assert processor.waiting_for("inv-1")  # a flush has it, not stored yet
    processor.restore(taken)  # the write failed: waiting again
    assert processor.waiting_for("inv-1")
    processor.take(10)
    processor.stored()
    assert not processor.waiting_for("inv-1")


def test_the_spans_of_a_run_about_to_end_are_taken_first_and_whole(
    processor: LiveSpanProcessor, tracer: Tracer
) -> None:
    other = {GenAI.CONVERSATION_ID: "s2", AgentDash.INVOCATION_ID: "inv-2"}
    for i in range(3):
        with tracer.start_as_current_span(f"older {i}", attributes=other):
            pass
    for i in range(2):
        with tracer.start_as_current_span(f"step {i}", attributes=SESSION):
            pass
    names = [s.span.name for s in processor.take(1, first={"inv-1"})]
    assert names == ["step 0", "step 1"]  # past the limit, ahead of older spans
    names = [s.span.name for s in processor.take(2, first={"inv-1"})]
    assert names == ["older 0", "older 1"]


def test_an_invocations_snapshots_for_a_caller_storing_them_itself(
    processor: LiveSpanProcessor, tracer: Tracer
) -> None:
    for name in ("first", "second"):
        with tracer.start_as_current_span(name, attributes=SESSION):
            pass
    with tracer.start_as_current_span("other", attributes={GenAI.CONVERSATION_ID: "s2"}):
        pass
    assert [s.span.name for s in processor.take(1)] == ["first"]  # a flush under way has it
    assert [s.span.name for s in processor.take_of("inv-1")] == ["first", "second"]
    assert processor.waiting_for("inv-1")  # the flush under way still has its own
    assert [s.span.name for s in processor.take(10)] == ["other"]


def test_it_tells_how_long_the_oldest_snapshot_waiting_has_waited(
    processor: LiveSpanProcessor, tracer: Tracer, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [100.0]
    monkeypatch.setattr("agentdash.spans.span_processor.time.monotonic", lambda: clock[0])
    assert processor.waited() == 0.0  # nothing waits
    first = tracer.start_span("first", attributes=SESSION)
    clock[0] = 100.5
    tracer.start_span("second", attributes=SESSION)
    clock[0] = 101.0
    assert processor.waited() == 1.0  # the first one's wait, not the second's
    processor.take(1)  # the first goes; the second has waited since the first came
    assert processor.waited() == 1.0
    processor.take(10)
    assert processor.waited() == 0.0
    first.end()  # a new snapshot into an empty buffer starts the wait again
    clock[0] = 101.25
    assert processor.waited() == 0.25


def test_spans_not_sent_fall_due_for_a_preview_after_their_wait_and_once(
    processor: LiveSpanProcessor, tracer: Tracer, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [100.0]
    monkeypatch.setattr("agentdash.spans.span_processor.time.monotonic", lambda: clock[0])
    assert processor.unsent_due(0.01) == ([], None)  # nothing waits
    first = tracer.start_span("first", attributes=SESSION)
    clock[0] = 100.004
    tracer.start_span("second", attributes=SESSION)
    clock[0] = 100.008
    first.end()  # its latest version; it still counts from its start's arrival
    due, wait = processor.unsent_due(0.01)
    assert due == [] and wait == pytest.approx(0.002)
    clock[0] = 100.011
    due, wait = processor.unsent_due(0.01)
    assert [(s.span.name, s.ended) for s in due] == [("first", True)]
    assert wait == pytest.approx(0.003)  # the second's turn
    clock[0] = 100.02
    assert [s.span.name for s in processor.unsent_due(0.01)[0]] == ["second"]
    assert processor.unsent_due(0.01) == ([], None)  # each version once
    assert processor.pending_count() == 2  # previews take nothing from the flusher


def test_a_span_stored_before_its_wait_is_over_is_never_due(
    processor: LiveSpanProcessor, tracer: Tracer
) -> None:
    span = tracer.start_span("quick", attributes=SESSION)
    processor.take(10)
    span.end()  # a later version arrives while the flush stores the first
    processor.stored()
    (due,), _ = processor.unsent_due(0.0)
    assert due.ended  # the version the flush did not have
    tracer.start_span("stored", attributes=SESSION)
    processor.take(10)
    processor.stored()
    assert processor.unsent_due(0.0) == ([], None)


def test_an_ended_version_waiting_is_not_replaced_by_an_open_one(
    processor: LiveSpanProcessor, tracer: Tracer
) -> None:
    span = tracer.start_span("a", attributes=SESSION)
    span.end()
    processor.on_start(span)  # a stray start after the end (a misbehaving instrumentation)
    (due,), _ = processor.unsent_due(0.0)
    assert due.ended


def test_the_previews_are_told_when_a_version_comes_while_none_waits_to_be_sent(
    processor: LiveSpanProcessor, tracer: Tracer
) -> None:
    told: list[int] = []
    processor.unsent = lambda: told.append(1)
    first = tracer.start_span("first", attributes=SESSION)
    tracer.start_span("second", attributes=SESSION)
    first.end()
    assert told == [1]  # the first version only: the others came while it waited
    processor.unsent_due(0.0)  # all previewed: none waits
    tracer.start_span("third", attributes=SESSION)
    assert told == [1, 1]
