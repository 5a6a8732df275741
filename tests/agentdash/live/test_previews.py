"""Spans sent before they are stored (``spans`` messages, ``live.previews``): what a slow flush
keeps waiting goes out unstored, then stored as a change; who gets them; hostile data."""

from __future__ import annotations

import json
import threading
import uuid
from datetime import date
from decimal import Decimal
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import channel_layers
from django.contrib.auth.models import User
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

from agentdash.live import previews
from agentdash.live.groups import session_group
from agentdash.live.pages import MAX_SENT_BYTES
from agentdash.live.pipeline import LivePipeline
from agentdash.live.previews import spans_pages
from agentdash.runs import streaming
from agentdash.spans.models import Span
from agentdash.spans.prices import model_price_set
from agentdash.spans.span_processor import SpanSnapshot
from agentdash.spans.span_version import SpanVersion
from agentdash.spans.totals import price_book
from runtime.telemetry.attributes import GenAI
from tests.agentdash.live.conftest import Connect, changes_until, hello, nothing_more, receive
from tests.agentdash.stored import session_of

pytestmark = pytest.mark.django_db(transaction=True)

tracer = trace.get_tracer("tests.live.previews")


def step(session_id: str, name: str) -> None:
    with tracer.start_as_current_span(name, attributes={GenAI.CONVERSATION_ID: session_id}):
        pass


@pytest.mark.parametrize("known_by", ["a flush", "its run starting"])
async def test_spans_a_slow_flush_keeps_waiting_go_out_unstored_then_stored(
    connect: Connect,
    live: LivePipeline,
    alice: User,
    monkeypatch: pytest.MonkeyPatch,
    known_by: str,
) -> None:
    session = await sync_to_async(session_of)(alice, f"s-{uuid.uuid4().hex[:8]}")
    socket = await connect(alice, session.id)
    await hello(socket)
    first = 1
    if known_by == "a flush":  # the flusher learns the session by storing a span of it
        step(session.id, "first")
        items, _ = await changes_until(socket, lambda items: bool(items))
        assert [i["data"]["name"] for i in items] == ["first"]
        first = 2
    else:  # a run of the session began in this process: nothing to look up
        streaming.run_started(session_id=session.id, invocation_id="e-inv", run_id=1)

    gate = threading.Event()
    entered = threading.Event()
    write = live.writer.write

    def slow_write(*args: Any) -> Any:
        entered.set()
        gate.wait(timeout=60)  # the database is slow until the test says otherwise
        return write(*args)

    monkeypatch.setattr(live.writer, "write", slow_write)
    sent = live.previews.sent
    try:
        step(session.id, "taken")  # taken by the flush that now waits for the database
        await sync_to_async(entered.wait)(timeout=10)
        step(session.id, "waiting")  # not even taken yet: the flush is busy
        previewed: list[dict[str, Any]] = []
        while {d["name"] for d in previewed} != {"taken", "waiting"}:
            message = await receive(socket)
            assert message["type"] == "spans", message  # nothing stored has gone out
            previewed += message["items"]
        assert all(d["end_time"] is not None and d["summary"]["seq"] == 0 for d in previewed)
        stored = Span.objects.filter(session_id=session.id, name__in=["taken", "waiting"])
        assert not await stored.aexists()  # they are not stored yet
        assert live.previews.sent - sent >= 2
    finally:
        gate.set()
    # Then each as a stored change, with its seq, the data as previewed.
    items, _ = await changes_until(socket, lambda items: len(items) >= 2)
    names = [(i["seq"], i["data"]["name"]) for i in items]
    assert names == [(first, "taken"), (first + 1, "waiting")]
    by_name = {d["name"]: d for d in previewed}
    for item in items:
        seen = by_name[item["data"]["name"]]
        assert {**seen, "summary": None} == {**item["data"], "summary": None}
        assert {**seen["summary"], "seq": item["seq"]} == item["data"]["summary"]
    await nothing_more(socket)


async def test_a_preview_is_priced_from_a_table_read_off_the_loop_at_most_a_second_ago(
    connect: Connect, live: LivePipeline, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages are made on the flusher's loop, where Django refuses a query: the price table is
    read on the previews' thread when the book in hand is over a second old, and a preview
    made with a fresh one asks nothing."""
    apart = TracerProvider().get_tracer("tests.live.previews.apart")
    session = await sync_to_async(session_of)(alice, f"s-{uuid.uuid4().hex[:8]}")
    streaming.run_started(session_id=session.id, invocation_id="p-inv", run_id=1)
    socket = await connect(alice, session.id)
    await hello(socket)

    async def price(per_mtok: int) -> None:
        await sync_to_async(model_price_set)(
            model="preview-model",
            input_per_mtok=Decimal(per_mtok),
            output_per_mtok=Decimal(per_mtok),
            as_of=date(2026, 12, 1),
            source="test",
            actor=None,
        )

    async def previewed_cost() -> float:
        attributes = {
            GenAI.CONVERSATION_ID: session.id,
            GenAI.REQUEST_MODEL: "preview-model",
            GenAI.USAGE_INPUT_TOKENS: 1_000_000,
        }
        span = apart.start_span("call", attributes=attributes)  # the pipeline sees none
        span.end()
        snapshot = SpanSnapshot(span, attributes, True, (session.id,), ("p-inv",))  # type: ignore[arg-type]
        await live.previews.send([snapshot])  # on this loop: a query would raise here
        message = await receive(socket)
        assert message["type"] == "spans", message
        cost: float = message["items"][0]["usage"]["cost_usd"]
        return cost

    await price(1)
    monkeypatch.setattr(previews, "PRICES_FRESH_S", 0.0)
    assert await previewed_cost() == pytest.approx(1.0)  # read on the thread
    monkeypatch.setattr(previews, "PRICES_FRESH_S", 3600.0)
    await price(2)
    assert await previewed_cost() == pytest.approx(1.0)  # the book in hand: nothing read
    monkeypatch.setattr(previews, "PRICES_FRESH_S", 0.0)
    assert await previewed_cost() == pytest.approx(2.0)  # too old: read again, off the loop
    # The loop makes its pages with the book it found fresh, not asking its age again (a
    # second may have gone by meanwhile): given a book, ``pages`` asks nothing, even when
    # the book held is stale — on this loop, a query would raise.
    book = live.previews._book
    assert book is not None
    live.previews._book = None
    attributes = {
        GenAI.CONVERSATION_ID: session.id,
        GenAI.REQUEST_MODEL: "preview-model",
        GenAI.USAGE_INPUT_TOKENS: 1_000_000,
    }
    span = apart.start_span("call", attributes=attributes)
    span.end()
    snapshot = SpanSnapshot(span, attributes, True, (session.id,), ("p-inv",))  # type: ignore[arg-type]
    (texts,) = live.previews.pages([snapshot], book[1]).values()
    assert json.loads(texts[0])["items"][0]["usage"]["cost_usd"] == pytest.approx(2.0)


async def test_previews_reach_live_clients_of_the_session_only(
    connect: Connect, live: LivePipeline, alice: User, bob: User
) -> None:
    session = await sync_to_async(session_of)(alice, f"s-{uuid.uuid4().hex[:8]}")
    other = await sync_to_async(session_of)(bob, f"s-{uuid.uuid4().hex[:8]}")
    watching = await connect(alice, session.id)
    elsewhere = await connect(bob, other.id)
    await hello(elsewhere)
    version = SpanVersion(
        trace_id=uuid.uuid4().hex, span_id=uuid.uuid4().hex[:16], name="s", start_time=1
    )
    pages = await sync_to_async(spans_pages)([version], price_book())
    layer = channel_layers["default"]
    message = {"type": "session.spans", "pages": pages}
    await layer.group_send(session_group(session.id), message)  # before its hello: nothing
    await hello(watching)
    await nothing_more(watching)
    await layer.group_send(session_group(session.id), message)
    assert await receive(watching) == json.loads(pages[0])
    await nothing_more(watching)
    await nothing_more(elsewhere)  # another session's client hears nothing of it


def test_hostile_span_data_makes_valid_messages_within_the_send_limit(db: None) -> None:
    hostile = {
        "nul": "a\x00b",
        "surrogate": "x\ud800y",
        "markup": "<img src=x onerror=alert(1)>",
        "nested": json.loads("[" * 200 + "]" * 200),
    }
    huge = {"blob": "é" * 2_000_000}
    versions = [
        SpanVersion(
            trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
            span_id=f"{n:016x}",
            name=f"span {n}",
            start_time=n,
            attributes=attributes,
        )
        for n, attributes in enumerate([hostile, huge, *([{"k": "v" * 1000}] * 600)])
    ]
    pages = spans_pages(versions, price_book())
    assert len(pages) > 1
    found = []
    for page in pages:
        assert len(page.encode("utf-8")) <= MAX_SENT_BYTES
        message = json.loads(page)
        assert message["type"] == "spans"
        found += message["items"]
    assert [d["name"] for d in found] == [v.name for v in versions]  # all, in order
    first, big = found[0]["attributes"], found[1]["attributes"]
    assert "\x00" not in first["nul"] and "\ud800" not in first["surrogate"]
    assert first["markup"] == hostile["markup"]  # data, shown as text by the page
    assert big == {"agentdash.truncated": True}  # too large alone: sent without attributes
