"""The live pipeline end to end: a real Runner run streams its spans and events to a socket;
many spans go out in few messages; a pipeline that falls behind holds the producer back and
loses nothing."""

from __future__ import annotations

import asyncio
import threading
import uuid
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import channel_layers
from django.contrib.auth.models import User
from django.db import OperationalError
from google.genai import types
from opentelemetry import trace

from agentdash.agent_sessions.session_service import DjangoSessionService
from agentdash.changes.models import SessionChange
from agentdash.changes.selectors import session_last_seq
from agentdash.live.pipeline import LivePipeline, notify
from agentdash.runs.models import Run
from agentdash.spans.models import Span
from agentdash.spans.span_processor import SpanSnapshot
from runtime import LlmAgent, Runner, ScriptedLlm
from runtime.telemetry.attributes import AgentDash, GenAI
from tests.agentdash.live.conftest import (
    Connect,
    changes_until,
    eventually,
    hello,
    nothing_more,
)
from tests.agentdash.stored import session_of

pytestmark = pytest.mark.django_db(transaction=True)

tracer = trace.get_tracer("tests.live")


def ended_in(session_id: str, name: str) -> SpanSnapshot:
    """An ended span of the session, as the span processor hands it to the flusher (made by
    a provider of its own: no processor of the pipeline sees it)."""
    from opentelemetry.sdk.trace import TracerProvider

    span = (
        TracerProvider()
        .get_tracer("tests.live.flush")
        .start_span(name, attributes={GenAI.CONVERSATION_ID: session_id})
    )
    span.end()
    return SpanSnapshot(span, dict(span.attributes or {}), True, (session_id,), ())


def spans_named(items: list[dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    return [i for i in items if i["kind"] == "span" and i["data"]["name"].startswith(prefix)]


async def test_a_runner_run_streams_span_starts_then_ends_and_events(
    connect: Connect, live: LivePipeline, alice: User
) -> None:
    session = await sync_to_async(session_of)(alice, "s-run")
    run = await Run.objects.acreate(
        session=session, agent_name="helper", invocation_id="inv-live", message={}
    )
    may_answer = asyncio.Event()

    async def look_up(city: str) -> dict:
        """Look a city up."""
        await may_answer.wait()  # the run holds here until the client has seen it start
        return {"city": city, "country": "France"}

    agent = LlmAgent(
        name="helper",
        model=ScriptedLlm(
            responses=[
                types.FunctionCall(name="look_up", args={"city": "Paris"}),
                "It is **France**.",
            ]
        ),
        tools=[look_up],
    )
    runner = Runner(agent=agent, app_name="app", session_service=DjangoSessionService())
    socket = await connect(alice, session.id)
    assert await hello(socket) == ([], 0)

    async def drive() -> None:
        message = types.Content(role="user", parts=[types.Part(text="Where is Paris?")])
        async for _ in runner.run_async(
            user_id=session.user_id,
            session_id=session.id,
            new_message=message,
            invocation_id="inv-live",
        ):
            pass

    task = asyncio.create_task(drive())
    seen, _ = await changes_until(socket, lambda items: bool(spans_named(items, "execute_tool")))
    (start,) = spans_named(seen, "invocation")
    assert start["data"]["end_time"] is None and start["data"]["status"] == "unset"
    assert start["data"]["run_id"] == run.pk
    assert not task.done()
    may_answer.set()
    await task
    await live.stop()  # flushes and publishes everything that waits

    last = await sync_to_async(session_last_seq)(session_id=session.id)
    rest, _ = await changes_until(socket, lambda items: bool(items) and items[-1]["seq"] >= last)
    items = seen + rest
    assert [i["seq"] for i in items] == list(range(1, last + 1))  # every change, once, in order
    (end,) = spans_named(rest, "invocation")
    assert end["seq"] > start["seq"]
    assert end["data"]["span_id"] == start["data"]["span_id"]
    assert end["data"]["end_time"] is not None and end["data"]["status"] == "unset"
    assert {i["data"]["run_id"] for i in items if i["kind"] == "span"} == {run.pk}
    events = [i["data"] for i in items if i["kind"] == "event"]
    assert [e["author"] for e in events] == ["user", "helper", "helper", "helper"]
    assert events[1]["function_calls"][0]["args"] == {"city": "Paris"}
    assert events[2]["function_responses"][0]["response"]["country"] == "France"
    assert (events[-1]["html"], events[-1]["final"]) == (
        "<p>It is <strong>France</strong>.</p>\n",
        True,
    )
    # Every span of the run is stored in its final version.
    stored = [s async for s in Span.objects.filter(session_id=session.id)]
    assert stored and all(s.end_time is not None for s in stored)
    tool = next(s for s in stored if s.name.startswith("execute_tool"))
    assert tool.parent_span_id and tool.run_id == run.pk


async def test_many_spans_go_out_in_one_message(
    connect: Connect, live: LivePipeline, alice: User
) -> None:
    session = await sync_to_async(session_of)(alice, "s-batch")
    socket = await connect(alice, session.id)
    await hello(socket)
    # No await between them: the flusher takes them all at once.
    for i in range(50):
        with tracer.start_as_current_span(
            f"step {i}", attributes={GenAI.CONVERSATION_ID: session.id}
        ):
            pass
    items, messages = await changes_until(socket, lambda items: len(items) >= 50)
    assert messages == 1
    assert [i["data"]["name"] for i in items] == [f"step {i}" for i in range(50)]
    assert all(i["data"]["end_time"] is not None for i in items)  # start and end coalesced
    await nothing_more(socket)


async def test_the_flusher_wakes_for_work_not_on_a_timer(
    connect: Connect, live: LivePipeline, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    await live.stop()
    monkeypatch.setattr(live, "idle_timeout", 3600.0)  # were a wake missed, nothing would come
    live.start()
    session = await sync_to_async(session_of)(alice, "s-wake")
    socket = await connect(alice, session.id)
    await hello(socket)
    for round_ in range(3):  # each time the flusher has gone back to sleep
        with tracer.start_as_current_span(
            f"step {round_}", attributes={GenAI.CONVERSATION_ID: session.id}
        ):
            pass
        (item,), _ = await changes_until(socket, lambda items: bool(items))
        assert item["data"]["name"] == f"step {round_}"
        await nothing_more(socket)

    def write_unannounced() -> int:
        from agentdash.changes.services import session_change_next

        return session_change_next(session_id=session.id, kind="run", ref="9", announce=False)

    seq = await sync_to_async(write_unannounced)()
    await notify(session.id, seq=seq)  # a poke wakes it too
    (item,), _ = await changes_until(socket, lambda items: bool(items))
    assert item["seq"] == seq


async def test_notify_publishes_changes_written_elsewhere(
    connect: Connect, live: LivePipeline, alice: User
) -> None:
    session = await sync_to_async(session_of)(alice, "s-notify")
    socket = await connect(alice, session.id)
    await hello(socket)

    def write_unannounced() -> None:
        from agentdash.changes.services import session_change_next

        for ref in ("1", "2"):
            session_change_next(session_id=session.id, kind="run", ref=ref, announce=False)

    await sync_to_async(write_unannounced)()
    await nothing_more(socket)  # the flusher heard of nothing: nothing was sent
    await notify(session.id)
    items, _ = await changes_until(socket, lambda items: bool(items) and items[-1]["seq"] >= 2)
    assert [i["seq"] for i in items] == [1, 2]  # the newest was published, the gap filled


async def test_a_long_backlog_goes_out_over_several_flushes(
    connect: Connect, live: LivePipeline, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live.writer, "publish_limit", 3)
    session = await sync_to_async(session_of)(alice, "s-backlog")
    socket = await connect(alice, session.id)
    await hello(socket)

    def write_unannounced() -> None:
        from agentdash.changes.services import session_change_next

        for ref in range(7):
            session_change_next(session_id=session.id, kind="run", ref=str(ref), announce=False)

    await sync_to_async(write_unannounced)()
    await notify(session.id, seq=1)
    items, messages = await changes_until(socket, lambda items: len(items) >= 7)
    assert [i["seq"] for i in items] == list(range(1, 8))
    assert messages == 3  # 3 + 3 + 1: one page per flush
    await nothing_more(socket)


def test_the_rest_of_a_backlog_goes_before_newer_changes(alice: User) -> None:
    from agentdash.changes.services import session_change_next
    from agentdash.live.flush_writer import FlushWriter

    session = session_of(alice, "s-backlog-then-new")
    for ref in range(7):
        session_change_next(session_id=session.id, kind="run", ref=str(ref), announce=False)
    writer = FlushWriter(publish_limit=3)
    (first,) = writer.write([], {session.id: 1})
    assert ([i["seq"] for i in first.items], first.more) == ([1, 2, 3], True)
    writer.published(first)
    newest = session_change_next(session_id=session.id, kind="run", ref="7", announce=False)
    pages = []
    while True:  # the newest change's hint must not skip the seqs still waiting
        (batch,) = writer.write([], {session.id: newest})
        writer.published(batch)
        pages.append([i["seq"] for i in batch.items])
        if not batch.more:
            break
    assert pages == [[4, 5, 6], [7, 8]]


async def test_spans_that_waited_their_linger_already_go_at_once(
    connect: Connect, live: LivePipeline, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flusher lets a step's spans gather for ``linger`` after the first one came, not
    after each flush: work that gathered during a flush long enough goes at once. (A linger
    of a minute here: lingering after a flush regardless, the span would not come.)"""
    session = await sync_to_async(session_of)(alice, "s-linger-over")
    socket = await connect(alice, session.id)
    await hello(socket)
    monkeypatch.setattr(live, "linger", 60.0)
    monkeypatch.setattr(live.processor, "waited", lambda: 61.0)  # it came a minute ago
    with tracer.start_as_current_span("waited", attributes={GenAI.CONVERSATION_ID: session.id}):
        pass
    items, _ = await changes_until(socket, lambda items: bool(items))
    assert [i["data"]["name"] for i in items] == ["waited"]


def test_a_flush_sends_all_the_spans_it_stored_from_memory_past_a_page(alice: User) -> None:
    """A flush stores at most its own limit of spans; when they run in line after what went
    out, all go from memory — more than a page of them too (a burst of tool calls): reading
    them back a page at a time, flush after flush, would cost what they were spared."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from opentelemetry.sdk.trace import TracerProvider

    from agentdash.live.flush_writer import FlushWriter

    session = session_of(alice, "s-past-a-page")
    own = TracerProvider().get_tracer("tests.live.page")
    snapshots = []
    for n in range(7):
        span = own.start_span(f"tick-{n}", attributes={GenAI.CONVERSATION_ID: session.id})
        span.end()
        snapshots.append(SpanSnapshot(span, dict(span.attributes or {}), True, (session.id,), ()))
    writer = FlushWriter(publish_limit=3)
    with CaptureQueriesContext(connection) as queries:
        (batch,) = writer.write(snapshots, {})
    assert [i["data"]["name"] for i in batch.items] == [f"tick-{n}" for n in range(7)]
    assert [i["seq"] for i in batch.items] == list(range(1, 8))
    assert not batch.more
    reads = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("SELECT")]
    assert not [sql for sql in reads if "changes_sessionchange" in sql]


def flushed_past_a_gap(writer: Any, session_id: str, first: Any) -> tuple[Any, list[str]]:
    """Two more ended spans of the session flushed, the session marked from seq 1 (its first
    span, already sent, told again late): the batch, and the SQL of the flush."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    again = {"seq": 1, "kind": "span", "data": first.items[0]["data"]}
    with CaptureQueriesContext(connection) as queries:
        (batch,) = writer.write(
            [ended_in(session_id, "a"), ended_in(session_id, "b")],
            {session_id: 1},
            {session_id: [lambda limit: [again]]},
        )
    return batch, [q["sql"] for q in queries.captured_queries]


def test_a_change_committed_while_a_flush_stored_fills_its_gap_alone(alice: User) -> None:
    """A run's change committed between a flush's start and its spans' seqs (announced only
    after the flush began) leaves a gap before them: the flush reads that change alone from
    the change log, not the whole session after what went out, and sends the rest as
    stored."""

    from agentdash.changes.services import session_change_next
    from agentdash.live.flush_writer import FlushWriter

    session = session_of(alice, "s-gap-alone")

    def ended(name: str) -> SpanSnapshot:
        return ended_in(session.id, name)

    writer = FlushWriter(publish_limit=100)
    (first,) = writer.write([ended("first")], {})
    writer.published(first)  # seq 1 went out
    run = Run.objects.create(
        session=session, agent_name="a", invocation_id=uuid.uuid4().hex, status="running",
        message={},
    )  # fmt: skip
    between = session_change_next(
        session_id=session.id, kind="run", ref=str(run.pk), announce=False
    )
    batch, queries = flushed_past_a_gap(writer, session.id, first)
    assert [(i["seq"], i["kind"]) for i in batch.items] == [
        (between, "run"),
        (between + 1, "span"),
        (between + 2, "span"),
    ]
    assert batch.items[0]["data"]["id"] == run.pk
    assert not batch.more
    assert not [sql for sql in queries if "ROW_NUMBER" in sql.upper()]


def test_a_change_announced_while_a_flush_stored_fills_its_gap_from_memory(alice: User) -> None:
    """The change in the gap was announced with its items after the flush took its work
    (an event appended meanwhile): the flush makes it from that announcement — no read of
    the change log — and sends the gap and its own spans in order. What was announced
    without items in memory (a run's change, read when made) is still read."""

    from agentdash.changes.items import ChangesRead
    from agentdash.changes.services import session_change_next
    from agentdash.live.flush_writer import FlushWriter

    session = session_of(alice, "s-gap-told")

    def ended(name: str) -> SpanSnapshot:
        return ended_in(session.id, name)

    announced: dict[str, list[Any]] = {}
    asked: list[list[str]] = []

    def late(sessions: Any) -> dict[str, list[Any]]:
        asked.append(list(sessions))
        return {s: announced[s] for s in sessions if s in announced}

    writer = FlushWriter(publish_limit=100, late=late)
    (first,) = writer.write([ended("first")], {})
    writer.published(first)
    between = session_change_next(session_id=session.id, kind="event", ref="e-1", announce=False)
    told = {"seq": between, "kind": "event", "data": {"id": "e-1", "told": "from memory"}}
    limits: list[int] = []  # what the late maker is asked to make: the one seq missing
    announced[session.id] = [lambda limit: (limits.append(limit), [told])[1]]
    batch, queries = flushed_past_a_gap(writer, session.id, first)
    assert [(i["seq"], i["kind"]) for i in batch.items] == [
        (between, "event"),
        (between + 1, "span"),
        (between + 2, "span"),
    ]
    assert batch.items[0]["data"] == {"id": "e-1", "told": "from memory"}
    assert asked == [[session.id]]
    assert limits == [1]  # not a page of it: a big late write is not made whole for one hole
    reads = [sql for sql in queries if sql.lstrip().upper().startswith("SELECT")]
    assert not [sql for sql in reads if "changes_sessionchange" in sql]

    writer.published(batch)
    run = Run.objects.create(
        session=session, agent_name="a", invocation_id=uuid.uuid4().hex, status="running",
        message={},
    )  # fmt: skip
    read = session_change_next(session_id=session.id, kind="run", ref=str(run.pk), announce=False)
    announced[session.id] = [ChangesRead(((session.id, read, "run", str(run.pk)),))]
    last = batch.items[-1]
    (batch,) = writer.write(
        [ended("c")], {session.id: last["seq"]}, {session.id: [lambda limit: [last]]}
    )
    assert [(i["seq"], i["kind"]) for i in batch.items] == [(read, "run"), (read + 1, "span")]
    assert batch.items[0]["data"]["id"] == run.pk  # read from the database


def test_a_session_deleted_between_flushes_costs_only_its_own_spans(alice: User) -> None:
    """The flusher remembers the sessions it has seen; one deleted since (its spans refused
    by the database) costs its own spans, not the flush's others, and not later flushes —
    the refusal is met where the flusher tells it apart (foreign keys are checked at the
    commit: a flush's store is its own transaction)."""

    from agentdash.agent_sessions.models import AgentSession
    from agentdash.live.flush_writer import FlushWriter

    kept, gone = session_of(alice, "s-kept"), session_of(alice, "s-gone")
    ended = ended_in

    writer = FlushWriter(publish_limit=100)
    writer.write([ended(gone.id, "seen")], {})  # looked up, remembered
    AgentSession.objects.filter(pk=gone.id).delete()
    for round_ in range(2):
        writer.write([ended(gone.id, f"late-{round_}"), ended(kept.id, f"kept-{round_}")], {})
    assert set(Span.objects.filter(session_id=kept.id).values_list("name", flat=True)) == {
        "kept-0",
        "kept-1",
    }
    assert not Span.objects.filter(name__startswith="late-").exists()


def test_an_announced_write_past_a_page_goes_from_memory(alice: User) -> None:
    """Items announced with their write (an export's spans) are made from memory past a page,
    up to the writer's bound: a flusher that fell behind a fast sender, finding two exports'
    worth of one session's spans, does not read the second back from the database."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from agentdash.changes.services import session_change_next
    from agentdash.live.flush_writer import ANNOUNCED_PAGES, FlushWriter

    session = session_of(alice, "s-announced-past-a-page")
    seqs = [
        session_change_next(session_id=session.id, kind="run", ref=str(n), announce=False)
        for n in range(7)
    ]

    def maker(part: list[int]) -> Any:
        return lambda limit: [{"seq": s, "kind": "run", "data": {"ref": s}} for s in part][:limit]

    writer = FlushWriter(publish_limit=3)
    assert writer.announced_limit == 3 * ANNOUNCED_PAGES
    with CaptureQueriesContext(connection) as queries:
        announced = {session.id: [maker(seqs[:4]), maker(seqs[4:])]}
        (batch,) = writer.write([], {session.id: seqs[0]}, announced)
    assert ([i["seq"] for i in batch.items], batch.more) == (seqs, False)
    assert [i["data"] for i in batch.items] == [{"ref": seq} for seq in seqs]  # as made
    assert not [q for q in queries.captured_queries if "changes_sessionchange" in q["sql"]]


def test_a_big_announced_write_makes_items_up_to_its_bound_and_the_rest_is_read(
    alice: User,
) -> None:
    """The items a big export announces are made up to the writer's bound (the publisher
    asks a maker for what it can send): not every span's item of a flush that sends 50,000."""
    from agentdash.changes.services import session_change_next
    from agentdash.live.flush_writer import FlushWriter

    session = session_of(alice, "s-big-announced")
    seqs = [
        session_change_next(session_id=session.id, kind="run", ref=str(n), announce=False)
        for n in range(8)
    ]
    asked: list[int] = []

    def maker(limit: int) -> list[dict[str, Any]]:
        asked.append(limit)
        items = [{"seq": seq, "kind": "run", "data": {"ref": seq}} for seq in seqs]
        return items[:limit]

    writer = FlushWriter(publish_limit=3, announced_limit=3)
    (first,) = writer.write([], {session.id: seqs[0]}, {session.id: [maker, maker]})
    assert asked == [3]  # what the bound allows asked of the first maker, none of the second
    assert ([i["seq"] for i in first.items], first.more) == (seqs[:3], True)
    assert [i["data"] for i in first.items] == [{"ref": seq} for seq in seqs[:3]]  # as made
    writer.published(first)
    pages = []
    while True:  # the rest, read back from the change log
        (batch,) = writer.write([], {session.id: None})
        writer.published(batch)
        pages.append([i["seq"] for i in batch.items])
        if not batch.more:
            break
    assert pages == [seqs[3:6], seqs[6:]]


def test_runs_announced_to_one_flush_are_read_together(alice: User) -> None:
    """Each run status change is announced with a maker that reads the run as it is then;
    a flush holding several reads them in one query (and their usage in one more), each
    run's item in its own session's batch, not a query per run."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from agentdash.changes.items import ChangesRead
    from agentdash.changes.services import session_change_next
    from agentdash.live.flush_writer import FlushWriter

    runs: dict[str, Run] = {}
    announced: dict[str, list[Any]] = {}
    firsts: dict[str, int | None] = {}
    for n, status in enumerate(["queued", "running", "succeeded"]):
        session = session_of(alice, f"s-read-together-{n}")
        run = Run.objects.create(
            session=session, agent_name="a", invocation_id=uuid.uuid4().hex, status=status,
            message={},
        )  # fmt: skip
        seq = session_change_next(
            session_id=session.id, kind="run", ref=str(run.pk), announce=False
        )
        runs[session.id], firsts[session.id] = run, seq
        announced[session.id] = [ChangesRead(((session.id, seq, "run", str(run.pk)),))]
    writer = FlushWriter(publish_limit=10)
    with CaptureQueriesContext(connection) as queries:
        batches = writer.write([], firsts, announced)
    assert len([q for q in queries.captured_queries if 'FROM "runs_run"' in q["sql"]]) == 1
    assert sorted(b.session_id for b in batches) == sorted(runs)
    for batch in batches:
        (item,) = batch.items
        run = runs[batch.session_id]
        assert (item["seq"], item["data"]["id"], item["data"]["status"]) == (
            firsts[batch.session_id],
            run.pk,
            run.status,
        )


def test_a_runs_status_change_and_its_new_totals_are_read_together(alice: User) -> None:
    """A flush told of a run's status change that also stores a model call of it (its
    totals grew: a change of its own) reads the run once for both, and the price table
    once for the span and the run, and sends both."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from opentelemetry.sdk.trace import TracerProvider

    from agentdash.changes.items import ChangesRead
    from agentdash.changes.services import session_change_next
    from agentdash.live.flush_writer import FlushWriter

    session = session_of(alice, "s-run-read-once")
    run = Run.objects.create(
        session=session, agent_name="a", invocation_id=uuid.uuid4().hex, status="running",
        message={},
    )  # fmt: skip
    status = session_change_next(session_id=session.id, kind="run", ref=str(run.pk), announce=False)
    writer = FlushWriter(publish_limit=100)
    own = TracerProvider().get_tracer("tests.live.totals")
    attributes = {
        GenAI.CONVERSATION_ID: session.id,
        GenAI.USAGE_INPUT_TOKENS: 12,
        GenAI.USAGE_OUTPUT_TOKENS: 3,
    }
    span = own.start_span("generate_content m", attributes=attributes)
    span.end()
    call = SpanSnapshot(
        span, dict(span.attributes or {}), True, (session.id,), (run.invocation_id,)
    )
    told = ChangesRead(((session.id, status, "run", str(run.pk)),))
    with CaptureQueriesContext(connection) as queries:
        (batch,) = writer.write([call], {session.id: status}, {session.id: [told]})
    kinds = [(i["seq"], i["kind"]) for i in batch.items]
    assert kinds == [(status, "run"), (status + 1, "span"), (status + 2, "run")]
    assert batch.items[2]["data"]["usage"]["input"] == 12
    runs_read = [q for q in queries.captured_queries if '"runs_run"."status"' in q["sql"]]
    assert len(runs_read) == 1, [q["sql"] for q in runs_read]
    prices_read = [q for q in queries.captured_queries if '"spans_modelprice"' in q["sql"]]
    assert len(prices_read) == 1  # the span and the run priced from one read of the table


def test_a_change_announced_after_it_went_out_makes_no_flush_read_back(alice: User) -> None:
    """A change whose announcement reaches the publisher only after a flush had read it back
    from the database (seqs taken beside it came first) is announced again with the next
    change: that flush sends the new change as announced and reads nothing back — what it
    already sent is not a gap."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from agentdash.changes.items import ChangesRead
    from agentdash.changes.services import session_change_next
    from agentdash.live.flush_writer import FlushWriter

    session = session_of(alice, "s-announced-late")
    run = Run.objects.create(
        session=session, agent_name="a", invocation_id=uuid.uuid4().hex, status="running",
        message={},
    )  # fmt: skip

    def run_change() -> ChangesRead:
        seq = session_change_next(
            session_id=session.id, kind="run", ref=str(run.pk), announce=False
        )
        return ChangesRead(((session.id, seq, "run", str(run.pk)),))

    writer = FlushWriter(publish_limit=10)
    late = run_change()  # seq 1: recorded, its announcement not yet here
    (first,) = writer.write([], {session.id: 1}, {}, untold={session.id})  # read back
    assert [i["seq"] for i in first.items] == [1]
    writer.published(first)
    new = run_change()  # seq 2
    with CaptureQueriesContext(connection) as queries:
        (second,) = writer.write([], {session.id: 1}, {session.id: [late, new]})
    assert [i["seq"] for i in second.items] == [2]
    assert not [q for q in queries.captured_queries if "changes_sessionchange" in q["sql"]]


async def test_a_pipeline_behind_holds_the_producer_and_loses_nothing(
    live: LivePipeline, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = await sync_to_async(session_of)(alice, "s-pressure")
    monkeypatch.setattr(live, "high_water", 3)
    monkeypatch.setattr(live, "low_water", 0)
    gate = threading.Event()
    write = live.writer.write

    def slow_write(*args: Any) -> Any:
        gate.wait(timeout=60)  # the database is slow until the test says otherwise
        return write(*args)

    monkeypatch.setattr(live.writer, "write", slow_write)
    produced: list[str] = []

    async def produce() -> None:
        for i in range(20):
            attributes = {GenAI.CONVERSATION_ID: session.id}
            with tracer.start_as_current_span(f"step {i}", attributes=attributes):
                produced.append(f"step {i}")
            await live.backpressure()

    producer = asyncio.create_task(produce())
    try:
        await eventually(lambda: live.backpressure_waits, "the producer to be held back")
        for _ in range(20):  # let the loop run: the producer stays held while writes block
            await asyncio.sleep(0)
        assert not producer.done()
        assert len(produced) < 20
    finally:
        gate.set()
    await producer
    await live.stop()
    stored = {s.name: s async for s in Span.objects.filter(session_id=session.id)}
    assert sorted(stored) == sorted(produced) and len(produced) == 20
    assert all(s.end_time is not None for s in stored.values())
    changes = [c async for c in SessionChange.objects.filter(session_id=session.id)]
    assert [c.seq for c in changes] == list(range(1, len(changes) + 1))


async def test_spans_of_unknown_sessions_are_not_kept(live: LivePipeline) -> None:
    unknown = {GenAI.CONVERSATION_ID: "not-stored"}
    with tracer.start_as_current_span("x", attributes=unknown), tracer.start_as_current_span("c"):
        pass
    with tracer.start_as_current_span("no session at all"):
        pass
    await live.stop()
    assert not await Span.objects.acount()


async def test_an_unreachable_database_keeps_the_flush_for_later_with_growing_pauses(
    live: LivePipeline, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = await sync_to_async(session_of)(alice, f"s-{uuid.uuid4().hex[:8]}")
    write = live.writer.write
    outage = [1, 2, 3]
    pauses: list[float] = []

    def down_for_a_while(*args: Any) -> Any:
        if outage:
            outage.pop()
            pauses.append(live.faults.pause())
            raise OperationalError("connection refused")
        return write(*args)

    monkeypatch.setattr(live.writer, "write", down_for_a_while)
    before = live.failures
    with tracer.start_as_current_span("kept", attributes={GenAI.CONVERSATION_ID: session.id}):
        pass
    await eventually(lambda: Span.objects.filter(name="kept").aexists(), "the retried write")
    # Back to normal once the write that stored it has returned (the row is there a moment
    # before: the flusher hears of its success after the commit).
    await eventually(lambda: live.faults.unreachable == 0, "the flusher to count no outage")
    assert live.failures - before == 3
    assert pauses == sorted(pauses) and pauses[-1] > pauses[0]  # backing off, not hammering


async def test_a_message_the_channel_layer_refused_is_sent_again(
    connect: Connect, live: LivePipeline, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = await sync_to_async(session_of)(alice, f"s-{uuid.uuid4().hex[:8]}")
    socket = await connect(alice, session.id)
    assert await hello(socket) == ([], 0)
    layer = channel_layers["default"]
    real_send = layer.group_send
    refused = [1, 2]

    async def flaky_send(group: str, message: dict[str, Any]) -> None:
        if message.get("type") == "session.changes" and refused:
            refused.pop()
            raise ConnectionError("the channel layer is down")
        await real_send(group, message)

    monkeypatch.setattr(layer, "group_send", flaky_send)
    before = live.failures
    with tracer.start_as_current_span("kept", attributes={GenAI.CONVERSATION_ID: session.id}):
        pass
    # The open socket gets it once the layer takes messages again, without asking.
    items, _ = await changes_until(socket, lambda items: bool(items))
    assert [i["data"]["name"] for i in items] == ["kept"] and not refused
    assert live.failures - before == 2 and live.faults.unsent == 0


async def test_one_sessions_bad_data_never_holds_up_another_and_is_not_retried_for_ever(
    connect: Connect, live: LivePipeline, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = await sync_to_async(session_of)(alice, f"s-bad-{uuid.uuid4().hex[:8]}")
    good = await sync_to_async(session_of)(alice, f"s-good-{uuid.uuid4().hex[:8]}")
    socket = await connect(alice, good.id)
    assert await hello(socket) == ([], 0)
    write = live.writer.write
    attempts: list[set[str]] = []

    def fails_for_bad(snapshots: Any, dirty: Any) -> Any:
        sessions = {s.sessions[0] for s in snapshots} | set(dirty)
        attempts.append(sessions)
        if bad.id in sessions:
            raise ValueError("a row that cannot be read")
        return write(snapshots, dirty)

    monkeypatch.setattr(live.writer, "write", fails_for_bad)
    before = live.failures
    for session in (bad, good):
        with tracer.start_as_current_span(
            f"span of {session.id}", attributes={GenAI.CONVERSATION_ID: session.id}
        ):
            pass
    items, _ = await changes_until(socket, lambda items: bool(items))
    assert [i["data"]["name"] for i in items] == [f"span of {good.id}"]
    # Each failed flush was redone session by session, the bad part alone once, then left out.
    await eventually(lambda: live.processor.pending_count() == 0, "the flusher to be idle")
    assert {bad.id} in attempts and live.failures > before
    tried, failed = len(attempts), live.failures
    await asyncio.sleep(live.faults.retry_delay * 5)
    assert (len(attempts), live.failures) == (tried, failed)  # nothing retried in a loop


async def test_a_span_the_database_refuses_goes_out_reduced_beside_the_others(
    connect: Connect, live: LivePipeline, alice: User
) -> None:
    session = await sync_to_async(session_of)(alice, f"s-{uuid.uuid4().hex[:8]}")
    socket = await connect(alice, session.id)
    assert await hello(socket) == ([], 0)
    before = live.failures
    owner = {GenAI.CONVERSATION_ID: session.id}
    with tracer.start_as_current_span("fine", attributes=owner):
        pass
    span = tracer.start_span("poison", attributes=owner)
    # Its snapshot carries what JSON cannot encode (as a misbehaving exporter might hand over),
    # put in place of its start snapshot before the flusher (on this loop) can take that.
    live.processor._put(SpanSnapshot(span, {"bad": object()}, False, (session.id,), ()))  # type: ignore[arg-type]
    items, _ = await changes_until(socket, lambda items: len(items) >= 2)
    span.end()
    by_name = {i["data"]["name"]: i["data"] for i in items}
    assert set(by_name["poison"]["attributes"]) == {AgentDash.STORAGE_ERROR}
    assert "fine" in by_name and live.failures == before  # no flush failed for it


async def test_spans_and_backpressure_from_another_thread_and_loop(
    live: LivePipeline, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As with ``Runner.run``, whose runs happen on a loop of their own in a thread."""
    session = await sync_to_async(session_of)(alice, "s-thread")
    monkeypatch.setattr(live, "high_water", 2)
    monkeypatch.setattr(live, "low_water", 0)

    async def produce() -> None:
        for i in range(30):
            attributes = {GenAI.CONVERSATION_ID: session.id}
            with tracer.start_as_current_span(f"step {i}", attributes=attributes):
                pass
            await live.backpressure()  # waits on the pipeline's loop, from this one

    gate = threading.Event()
    write = live.writer.write

    def slow_write(*args: Any) -> Any:
        gate.wait(timeout=60)
        return write(*args)

    monkeypatch.setattr(live.writer, "write", slow_write)
    producer = asyncio.create_task(asyncio.to_thread(asyncio.run, produce()))
    try:
        await eventually(lambda: live.backpressure_waits, "the other loop's run to be held back")
        assert not producer.done()
    finally:
        gate.set()
    await producer
    await live.stop()
    names = [
        name
        async for name in Span.objects.filter(session_id=session.id).values_list("name", flat=True)
    ]
    assert sorted(names) == sorted(f"step {i}" for i in range(30))


async def test_with_a_network_layer_the_flusher_runs_on_a_loop_of_its_own(
    alice: User, settings: Any, transactional_db: None
) -> None:
    from opentelemetry.sdk.trace import TracerProvider

    from agentdash.live.groups import (
        SESSIONS_LIST_GROUP,
        changes_items,
        session_group,
        touched_message,
    )
    from tests.agentdash.live.thread_layer import KeepingChannelLayer

    backend = "tests.agentdash.live.thread_layer.KeepingChannelLayer"
    settings.CHANNEL_LAYERS = {**settings.CHANNEL_LAYERS, "keeping": {"BACKEND": backend}}
    KeepingChannelLayer.sent.clear()
    session = await sync_to_async(session_of)(alice, "s-own-loop")
    pipeline = LivePipeline(channel_layer_alias="keeping")
    provider = TracerProvider()  # a provider of the test's own: no other pipeline sees it
    provider.add_span_processor(pipeline.processor)
    pipeline.processor.enabled = True
    private = provider.get_tracer("tests.own-loop")
    pipeline.launch()
    try:
        assert pipeline.running and pipeline._loop is not asyncio.get_running_loop()
        attributes = {GenAI.CONVERSATION_ID: session.id, AgentDash.INVOCATION_ID: "inv-own"}
        with private.start_as_current_span("step on this loop", attributes=attributes):
            pass
        await pipeline.settle("inv-own")  # from this loop, waits on the flusher's
        assert not pipeline.processor.waiting_for("inv-own")

        def published() -> list[tuple[str, str, dict[str, Any]]]:
            # Not the span's preview, sent before them when the flush took over 10 ms.
            found = [s for s in KeepingChannelLayer.sent if s[2]["type"] != "session.spans"]
            return found if len(found) >= 2 else []

        sent = await eventually(published, "the changes and the sessions list's notice")
        # The session's changes, and the sessions list's notice of the session.
        ((thread, group, message), (_, list_group, notice)) = sent
        assert (list_group, notice) == (SESSIONS_LIST_GROUP, touched_message([session.id]))
        assert thread == "agentdash-live-loop" and group == session_group(session.id)
        assert [i["data"]["name"] for i in changes_items(message)] == ["step on this loop"]
    finally:
        await pipeline.stop()
    assert not pipeline.running
    assert pipeline._loop_thread is None
    assert "agentdash-live-loop" not in {t.name for t in threading.enumerate()}


def test_a_session_with_only_new_spans_is_published_without_reading_it_back(
    alice: User,
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from opentelemetry.sdk.trace import TracerProvider

    from agentdash.changes.items import items_after
    from agentdash.changes.services import session_change_next
    from agentdash.live.flush_writer import FlushWriter
    from agentdash.spans.span_processor import LiveSpanProcessor

    session = session_of(alice, "s-direct")
    processor = LiveSpanProcessor(batch_size=1_000, wake=lambda: None)
    processor.enabled = True
    provider = TracerProvider()
    provider.add_span_processor(processor)
    private = provider.get_tracer("tests.direct")
    writer = FlushWriter(publish_limit=100)

    def flush(names: list[str], dirty: dict[str, int | None]) -> tuple[list[Any], list[str]]:
        for name in names:
            with private.start_as_current_span(
                name, attributes={GenAI.CONVERSATION_ID: session.id}
            ):
                pass
        with CaptureQueriesContext(connection) as queries:
            batches = writer.write(processor.take(1_000), dirty)
        for batch in batches:
            writer.published(batch)
        return batches, [q["sql"] for q in queries.captured_queries]

    flush(["first"], {})  # the first flush learns the session and where it stands
    (batch,), sql = flush(["second", "third"], {})
    assert [i["data"]["name"] for i in batch.items] == ["second", "third"]
    assert batch.items == items_after(session_id=session.id, after_seq=1, limit=10)
    assert not any("changes_sessionchange" in q and q.startswith("SELECT") for q in sql)

    # Another writer's change in between: read from the database, nothing skipped.
    seq = session_change_next(session_id=session.id, kind="run", ref="1", announce=False)
    (batch,), sql = flush(["fourth"], {session.id: seq})
    assert [(i["seq"], i["kind"]) for i in batch.items] == [(4, "run"), (5, "span")]
    assert any("changes_sessionchange" in q and q.startswith("SELECT") for q in sql)


READ_SPAN_ROWS = '"spans_span"."attributes"'
"""In a query that reads spans' rows back (a run's usage totals read only their index)."""


def test_spans_stored_elsewhere_in_the_process_go_out_as_announced(alice: User) -> None:
    """Spans another writer of this process stored (OTLP ingest) are announced with their
    items: the flush sends them without reading the changes or the spans back; a change
    announced without its items in the same flush has the session read from the database."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from agentdash.changes.announcements import announcer_register, announcer_unregister
    from agentdash.changes.items import items_after
    from agentdash.changes.services import session_change_next
    from agentdash.live.flush_writer import FlushWriter
    from agentdash.spans.services import spans_store
    from agentdash.spans.span_version import SpanVersion

    session = session_of(alice, "s-announced")
    dirty: dict[str, int | None] = {}
    announced: dict[str, list[Any]] = {}
    untold: set[str] = set()
    prompts: dict[int | None, bool] = {}  # seq → announced as prompt

    def listener(
        session_id: str, *, seq: int | None = None, items: Any = None, prompt: Any = False
    ) -> None:
        prompts[seq] = prompt
        dirty.setdefault(session_id, seq)
        if items is None:
            untold.add(session_id)
        else:
            announced.setdefault(session_id, []).append(items)

    def store(*names: str) -> None:
        trace_id = uuid.uuid4().hex
        spans_store(
            versions=[
                SpanVersion(
                    trace_id=trace_id,
                    span_id=f"{n + 1:016x}",
                    name=name,
                    start_time=1_000 + n,
                    end_time=2_000 + n,
                    attributes={"gen_ai.usage.input_tokens": 7, "text": "ünï <b>"},
                    session_id=session.id,
                )
                for n, name in enumerate(names)
            ]
        )

    def flush() -> tuple[list[Any], list[str]]:
        with CaptureQueriesContext(connection) as queries:
            batches = writer.write([], dict(dirty), dict(announced), set(untold))
        dirty.clear()
        announced.clear()
        untold.clear()
        for batch in batches:
            writer.published(batch)
        return batches, [q["sql"] for q in queries.captured_queries]

    writer = FlushWriter(publish_limit=100)
    announcer_register(listener)
    try:
        store("first")
        flush()  # the first flush learns where the session stands
        store("second", "third")
        store("fourth")
        (batch,), sql = flush()
        assert [i["data"]["name"] for i in batch.items] == ["second", "third", "fourth"]
        assert batch.items == items_after(session_id=session.id, after_seq=1, limit=10)
        assert batch.items[0]["data"]["usage"]["input"] == 7
        assert not any(q.startswith("SELECT") and READ_SPAN_ROWS in q for q in sql)
        assert not any(q.startswith("SELECT") and "changes_sessionchange" in q for q in sql)

        store("fifth")
        session_change_next(session_id=session.id, kind="run", ref="1")  # told no items
        (batch,), sql = flush()
        assert [(i["seq"], i["kind"]) for i in batch.items] == [(5, "span"), (6, "run")]
        # Spans stored outside the flusher go out at once (their sender waits to see them);
        # other changes may wait for more of a run's step to gather.
        assert prompts == {1: True, 2: True, 4: True, 5: True, 6: False}
        assert any(q.startswith("SELECT") and "changes_sessionchange" in q for q in sql)
        assert not any(q.startswith("SELECT") and READ_SPAN_ROWS in q for q in sql)
    finally:
        announcer_unregister(listener)
