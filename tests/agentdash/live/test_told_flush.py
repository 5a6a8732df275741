"""A flush with nothing to store whose changes were all told with their items (a run's end,
an event) is made from memory — no database, so no thread: ``FlushWriter.told`` — and a
run's end is told with its item as stored: its totals and what others wrote of it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agentdash.changes.announcements import ItemsMade, announcer_register, announcer_unregister
from agentdash.changes.items import ChangesRead, items_after
from agentdash.changes.services import session_change_next
from agentdash.live.flush_writer import FlushWriter
from agentdash.runs.lifecycle import run_conclude
from agentdash.runs.models import Run
from agentdash.spans.services import spans_store
from agentdash.spans.span_version import SpanVersion
from runtime.telemetry.attributes import AgentDash, GenAI
from tests.agentdash.stored import session_of

pytestmark = pytest.mark.django_db(transaction=True)


def told(session_id: str, *refs: str) -> tuple[int, list[ItemsMade]]:
    """Changes recorded for ``refs`` (kind run), each told with an item made from memory:
    (the first seq, their makers)."""
    makers = []
    for ref in refs:
        seq = session_change_next(session_id=session_id, kind="run", ref=ref, announce=False)
        makers.append(ItemsMade([{"seq": seq, "kind": "run", "data": {"id": ref}}]))
    return makers[0].items[0]["seq"], makers


def test_changes_told_with_their_items_go_from_memory_in_line(alice: User) -> None:
    session = session_of(alice, "s-told")
    writer = FlushWriter(publish_limit=10)
    first, makers = told(session.id, "1", "2")
    with CaptureQueriesContext(connection) as queries:
        (batch,) = writer.told({session.id: first}, {session.id: makers}, set())  # type: ignore[misc]
    assert queries.captured_queries == []
    assert ([i["seq"] for i in batch.items], batch.after, batch.more) == ([1, 2], 0, False)
    assert [(p["first"], p["last"], p["in_line"]) for p in batch.pages] == [(1, 2, True)]
    writer.published(batch)

    then, more = told(session.id, "3")
    with CaptureQueriesContext(connection) as queries:
        (batch,) = writer.told({session.id: then}, {session.id: more}, set())  # type: ignore[misc]
    assert queries.captured_queries == []
    assert ([i["seq"] for i in batch.items], batch.after) == ([3], 2)
    writer.published(batch)
    # Told again after it went out (a late announcement): nothing left to send.
    assert writer.told({session.id: then}, {session.id: more}, set()) == []


def test_what_needs_the_database_is_left_to_the_write(alice: User) -> None:
    """Each of these returns ``None`` (the flush goes to its thread) without a query."""
    session = session_of(alice, "s-not-told")
    writer = FlushWriter(publish_limit=10)
    first, makers = told(session.id, "1")
    gap_first, gap = told(session.id, "2", "3", "4")
    s = session.id
    cases: dict[str, tuple[dict[str, int | None], dict[str, list[Any]], set[str]]] = {
        "made on demand (may read)": ({s: first}, {s: [lambda limit: makers[0].items]}, set()),
        "read back": ({s: first}, {s: [ChangesRead(((s, first, "run", "1"),))]}, set()),
        "also marked without items": ({s: first}, {s: makers}, {s}),
        "a session marked, none told": ({s: first, "other": 1}, {s: makers}, set()),
        "a gap between two told": ({s: gap_first}, {s: [gap[0], gap[2]]}, set()),
        "where to start unknown": ({s: None}, {s: makers}, set()),
    }
    for why, (dirty, announced, untold) in cases.items():
        with CaptureQueriesContext(connection) as queries:
            assert writer.told(dirty, announced, untold) is None, why
        assert queries.captured_queries == [], why


@pytest.fixture
def announced() -> Iterator[dict[int, Any]]:
    """The items each change announced in this process came with, by seq."""
    found: dict[int, Any] = {}

    def listener(session_id: str, *, seq: Any = None, items: Any = None, prompt: Any = False):  # type: ignore[no-untyped-def]
        found[seq] = items

    announcer_register(listener)
    yield found
    announcer_unregister(listener)


def test_a_runs_end_is_told_with_its_item_as_stored(alice: User, announced: dict[int, Any]) -> None:
    session = session_of(alice, "s-run-end-told")
    run = Run.objects.create(
        session=session, agent_name="a", invocation_id=uuid.uuid4().hex, status="running",
        attempt=1, message={"role": "user", "parts": [{"text": "hi"}]},
    )  # fmt: skip
    usage = {GenAI.USAGE_INPUT_TOKENS: 12, GenAI.USAGE_OUTPUT_TOKENS: 3,
             GenAI.REQUEST_MODEL: "m", AgentDash.SPAN_KIND: "model"}  # fmt: skip
    spans_store(
        versions=[
            SpanVersion(trace_id=uuid.uuid4().hex, span_id="a" * 16, name="call m",
                        start_time=1, end_time=2, attributes=usage, session_id=session.id,
                        run_id=run.pk)
        ]
    )  # fmt: skip
    # Asked to stop by someone else meanwhile: the worker's ``run`` does not know it.
    Run.objects.filter(pk=run.pk).update(cancel_requested=True, cancel_reason="enough")

    assert run_conclude(run=run, status=Run.Status.SUCCEEDED, trace_id="")

    seq = max(announced)
    assert isinstance(announced[seq], ItemsMade)  # told with its item: nothing to read back
    (item,) = announced[seq](10)
    (stored,) = items_after(session_id=session.id, after_seq=seq - 1, limit=10)
    assert item == stored  # the item told is the item a client reads back
    assert item["data"]["status"] == "succeeded"
    assert item["data"]["cancel_requested"] is True
    assert item["data"]["usage"]["input"] == 12
    assert item["data"]["change_seq"] == seq


def test_a_settling_runs_totals_go_with_its_end_not_in_a_change_of_their_own(
    alice: User,
) -> None:
    """A flush that stores a model call of a run records a change of the run's totals —
    unless the run is settling (its end, recorded next, tells them)."""
    from opentelemetry.sdk.trace import TracerProvider

    from agentdash.spans.span_processor import SpanSnapshot

    tracer = TracerProvider().get_tracer("tests.live.told")
    kinds = {}
    for ending in (False, True):
        session = session_of(alice, f"s-settling-{ending}")
        run = Run.objects.create(
            session=session, agent_name="a", invocation_id=uuid.uuid4().hex, status="running",
            message={},
        )  # fmt: skip
        writer = FlushWriter(publish_limit=100)
        writer.learn(session_id=session.id, invocation_id=run.invocation_id, run_id=run.pk)
        usage = {GenAI.CONVERSATION_ID: session.id, GenAI.USAGE_INPUT_TOKENS: 12}
        span = tracer.start_span("call m", attributes=usage)
        span.end()
        call = SpanSnapshot(span, dict(span.attributes or {}), True, (session.id,),
                            (run.invocation_id,))  # fmt: skip
        ends = [run.invocation_id] if ending else []
        (batch,) = writer.write([call], {}, {}, (), ends)
        kinds[ending] = [i["kind"] for i in batch.items]
    assert kinds == {False: ["span", "run"], True: ["span"]}


def test_an_attempt_that_lost_its_run_tells_its_totals(
    alice: User, announced: dict[int, Any]
) -> None:
    """Reaped while alive, an attempt records no end; the totals its end would have told go
    in a change of the run as it is, read when published."""
    from agentdash.runs.lifecycle import run_usage_told

    session = session_of(alice, "s-lost-totals")
    run = Run.objects.create(
        session=session, agent_name="a", invocation_id=uuid.uuid4().hex, status="failed",
        message={},
    )  # fmt: skip
    run_usage_told(run=run)
    (seq,) = announced
    assert announced[seq] is None  # read back when published: the run as it is then
    (item,) = items_after(session_id=session.id, after_seq=seq - 1, limit=10)
    assert (item["kind"], item["data"]["id"], item["data"]["status"]) == ("run", run.pk, "failed")


def test_an_end_that_writes_nothing_tells_the_totals_and_a_gone_run_nothing(
    alice: User, announced: dict[int, Any]
) -> None:
    """The run's end, refused (the attempt lost its run: another attempt has it now), tells
    the totals in a change of the run as it is; a run deleted with its session, nothing."""
    from agentdash.runs.lifecycle import run_usage_told
    from agentdash.runs.worker import _concluded

    session = session_of(alice, "s-refused-end")
    run = Run.objects.create(
        session=session, agent_name="a", invocation_id=uuid.uuid4().hex, status="running",
        attempt=1, message={},
    )  # fmt: skip
    Run.objects.filter(pk=run.pk).update(attempt=2)  # reaped and claimed again elsewhere
    assert _concluded(run=run, status=Run.Status.SUCCEEDED, trace_id="") is False
    (seq,) = announced
    assert announced[seq] is None
    (item,) = items_after(session_id=session.id, after_seq=seq - 1, limit=10)
    assert (item["data"]["status"], item["data"]["attempt"]) == ("running", 2)

    session.delete()  # the run with it
    run_usage_told(run=run)  # nobody to tell: nothing recorded, nothing raised
    assert list(announced) == [seq]
