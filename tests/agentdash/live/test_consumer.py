"""The session websocket against the real ASGI app: who gets in, replay then live, reconnects
without gaps or duplicates, and frames that are too big, malformed or too many."""

from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.contrib.auth.models import User

from agentdash.changes.items import items_after
from agentdash.changes.services import session_change_next
from agentdash.live.consumers import SessionConsumer
from agentdash.live.groups import session_group
from agentdash.live.pages import MAX_SENT_BYTES, changes_pages
from agentdash.live.pipeline import LivePipeline, live_pipeline
from agentdash.live.protocol import MAX_FRAME_BYTES
from tests.agentdash.live.conftest import (
    Connect,
    changes_until,
    closed_with,
    hello,
    nothing_more,
    receive,
)
from tests.agentdash.stored import session_of, store_event

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def owned(alice: User) -> str:
    return session_of(alice, "s-alice").id


async def events(session_id: str, count: int, start: int = 0) -> None:
    for i in range(start, start + count):
        await sync_to_async(store_event)(session_id, f"message {i}")


def seqs(items: list[dict[str, Any]]) -> list[int]:
    return [item["seq"] for item in items]


# ── Connecting ──────────────────────────────────────────────────────────────────────────────
async def test_anonymous_visitors_are_closed_with_4403(connect: Connect, owned: str) -> None:
    socket = await connect(None, owned)
    assert socket.accepted
    assert await closed_with(socket) == 4403


async def test_other_users_are_closed_with_4403(connect: Connect, owned: str, bob: User) -> None:
    socket = await connect(bob, owned)
    assert await closed_with(socket) == 4403


async def test_a_missing_session_is_closed_with_4403(connect: Connect, alice: User) -> None:
    socket = await connect(alice, "no-such-session")
    assert await closed_with(socket) == 4403


@pytest.mark.parametrize("who", ["alice", "operator"])
async def test_the_owner_and_operators_get_in(
    connect: Connect, owned: str, who: str, alice: User, operator_user: User
) -> None:
    socket = await connect({"alice": alice, "operator": operator_user}[who], owned)
    assert socket.accepted
    assert await hello(socket) == ([], 0)


async def test_a_foreign_origin_is_refused_before_anything(
    connect: Connect, owned: str, alice: User
) -> None:
    socket = await connect(alice, owned, origin="https://evil.example.com")
    assert not socket.accepted


# ── Replay, live, reconnect ─────────────────────────────────────────────────────────────────
async def test_replay_in_pages_then_live(connect: Connect, owned: str, alice: User) -> None:
    await events(owned, 130)  # more than one replay page (100)
    socket = await connect(alice, owned)
    await socket.send_json_to({"type": "hello", "after_seq": 0})
    first, second, done = await receive(socket), await receive(socket), await receive(socket)
    assert (first["type"], first["replay"], len(first["items"])) == ("changes", True, 100)
    assert (second["type"], second["replay"], len(second["items"])) == ("changes", True, 30)
    assert done == {"type": "replay.done", "seq": 130}
    assert seqs(first["items"] + second["items"]) == list(range(1, 131))
    assert first["items"][0]["kind"] == "event"
    assert first["items"][0]["data"]["html"] == "<p>message 0</p>\n"

    await events(owned, 3, start=130)
    live, _ = await changes_until(socket, lambda items: len(items) >= 3)
    assert seqs(live) == [131, 132, 133]
    await nothing_more(socket)


async def test_reconnecting_gets_exactly_what_was_missed(
    connect: Connect, owned: str, alice: User
) -> None:
    await events(owned, 5)
    socket = await connect(alice, owned)
    replayed, last = await hello(socket)
    assert (seqs(replayed), last) == ([1, 2, 3, 4, 5], 5)
    await socket.disconnect()

    await events(owned, 4, start=5)  # while the client is away
    again = await connect(alice, owned)
    replayed, last = await hello(again, after_seq=3)
    assert (seqs(replayed), last) == ([4, 5, 6, 7, 8, 9], 9)
    await events(owned, 2, start=9)
    live, _ = await changes_until(again, lambda items: len(items) >= 2)
    assert seqs(live) == [10, 11]
    await nothing_more(again)


async def test_a_client_ahead_of_the_log_is_told_where_it_ends(
    connect: Connect, owned: str, alice: User
) -> None:
    await events(owned, 2)
    socket = await connect(alice, owned)
    assert await hello(socket, after_seq=50) == ([], 2)


async def test_a_gap_in_live_messages_is_filled_from_the_database(
    connect: Connect, live: LivePipeline, owned: str, alice: User
) -> None:
    await events(owned, 2)
    socket = await connect(alice, owned)
    assert (await hello(socket))[1] == 2
    await live.stop()  # from here on, only this test publishes: as a lossy layer would
    await events(owned, 3, start=2)  # seqs 3, 4, 5 stored
    layer = get_channel_layer()
    newest = await sync_to_async(items_after)(session_id=owned, after_seq=4, limit=10)
    await layer.group_send(session_group(owned), {"type": "session.changes", "items": newest})
    filled, _ = await changes_until(socket, lambda items: len(items) >= 3)
    assert seqs(filled) == [3, 4, 5]
    assert filled[0]["data"]["html"] == "<p>message 2</p>\n"

    # Old and repeated items are dropped; a batch with a hole inside is filled too.
    everything = await sync_to_async(items_after)(session_id=owned, after_seq=0, limit=10)
    await layer.group_send(session_group(owned), {"type": "session.changes", "items": everything})
    await nothing_more(socket)
    for i in range(3):
        await sync_to_async(session_change_next)(session_id=owned, kind="run", ref=str(i))
    stored = await sync_to_async(items_after)(session_id=owned, after_seq=5, limit=10)
    holed = [stored[0], stored[2]]  # 6 and 8: 7 was lost
    await layer.group_send(session_group(owned), {"type": "session.changes", "items": holed})
    filled, _ = await changes_until(socket, lambda items: len(items) >= 3)
    assert seqs(filled) == [6, 7, 8]
    assert filled[0] == {"seq": 6, "kind": "run", "data": None}  # no such run (any more)
    await nothing_more(socket)

    # A fill stops at the message's last seq: what is newer comes with its own message (after
    # the partial text that precedes it).
    await events(owned, 3, start=5)  # seqs 9, 10, 11
    newer = await sync_to_async(items_after)(session_id=owned, after_seq=8, limit=10)
    await layer.group_send(session_group(owned), {"type": "session.changes", "items": newer[1:2]})
    filled, _ = await changes_until(socket, lambda items: len(items) >= 2)
    assert seqs(filled) == [9, 10]
    await nothing_more(socket)
    await layer.group_send(session_group(owned), {"type": "session.changes", "items": newer[2:]})
    assert seqs((await changes_until(socket, lambda items: bool(items)))[0]) == [11]


async def test_encoded_pages_go_out_as_they_are_and_overlaps_and_gaps_are_mended(
    connect: Connect, live: LivePipeline, owned: str, alice: User
) -> None:
    """The pipeline publishes encoded pages: a page that follows what the client has is sent
    as it is (the very text); one that overlaps it is deduplicated, one after a gap waits for
    the gap to be filled from the database."""
    socket = await connect(alice, owned)
    await hello(socket)
    await live.stop()  # only this test publishes
    await events(owned, 8)
    stored = await sync_to_async(items_after)(session_id=owned, after_seq=0, limit=10)
    layer = get_channel_layer()

    async def publish(items: list[dict[str, Any]], limit: int = 100_000) -> None:
        pages = changes_pages(items, replay=False, limit=limit)
        await layer.group_send(session_group(owned), {"type": "session.changes", "pages": pages})

    await publish(stored[:3])
    assert await socket.receive_from() == changes_pages(stored[:3], replay=False)[0]["text"]
    two = 2 * max(len(json.dumps(item)) for item in stored) + 100
    assert len(changes_pages(stored[1:5], replay=False, limit=two)) > 1
    await publish(stored[1:5], limit=two)  # 2..5, over several pages: 4 and 5 are new
    received, _ = await changes_until(socket, lambda items: len(items) >= 2)
    assert seqs(received) == [4, 5] and received == stored[3:5]
    await publish(stored[6:8])  # 7, 8: 6 never came
    filled, _ = await changes_until(socket, lambda items: len(items) >= 3)
    assert filled == stored[5:8]
    await nothing_more(socket)


async def test_a_delivery_that_fails_keeps_the_socket_and_the_next_one_catches_up(
    connect: Connect, live: LivePipeline, owned: str, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentdash.live import consumers

    socket = await connect(alice, owned)
    await hello(socket)
    await live.stop()  # only this test publishes
    await events(owned, 3)
    stored = await sync_to_async(items_after)(session_id=owned, after_seq=0, limit=10)
    failures = []

    def unwell(**kwargs: Any) -> Any:
        failures.append(kwargs)
        raise ConnectionError("the database went away for a moment")

    monkeypatch.setattr(consumers, "items_after", unwell)
    layer = get_channel_layer()
    await layer.group_send(session_group(owned), {"type": "session.changes", "items": stored[1:2]})
    await nothing_more(socket)  # the fill failed: nothing sent, the socket still answers
    assert len(failures) == 1
    monkeypatch.setattr(consumers, "items_after", items_after)
    await layer.group_send(session_group(owned), {"type": "session.changes", "items": stored[2:]})
    filled, _ = await changes_until(socket, lambda items: len(items) >= 3)
    assert seqs(filled) == [1, 2, 3]


async def test_a_batch_too_large_for_one_message_goes_out_in_several_in_order(
    connect: Connect, live: LivePipeline, owned: str, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentdash.live import consumers

    monkeypatch.setattr(consumers, "MAX_SENT_BYTES", 1_500)
    socket = await connect(alice, owned)
    await hello(socket)
    await live.stop()  # only this test publishes
    for i in range(6):  # a few hundred characters each: two or three to a message
        await sync_to_async(store_event)(owned, f"message {i} " + "y" * 300)
    await sync_to_async(store_event)(owned, "x" * 3_000)  # too large even alone
    stored = await sync_to_async(items_after)(session_id=owned, after_seq=0, limit=10)
    layer = get_channel_layer()
    await layer.group_send(session_group(owned), {"type": "session.changes", "items": stored})
    received, messages = await changes_until(socket, lambda items: len(items) >= 7)
    assert seqs(received) == list(range(1, 8)) and messages >= 4
    assert received[:6] == stored[:6]  # whole, just split
    big = received[6]["data"]
    assert big["html"] == "<p>[too large to show live: see the stored event]</p>"
    assert big["id"] == stored[6]["data"]["id"] and big["author"] == "user"
    await nothing_more(socket)


async def test_nothing_live_reaches_a_client_before_hello(
    connect: Connect, owned: str, alice: User
) -> None:
    socket = await connect(alice, owned)
    await events(owned, 1)
    await nothing_more(socket)
    replayed, last = await hello(socket)
    assert (seqs(replayed), last) == ([1], 1)


async def test_partial_text_is_forwarded_live(connect: Connect, owned: str, alice: User) -> None:
    socket = await connect(alice, owned)
    await hello(socket)
    await live_pipeline().publish_partial(
        session_id=owned, run_id=7, invocation_id="inv", author="bot", text="Hel"
    )
    assert await receive(socket) == {
        "type": "partial",
        "run_id": 7,
        "invocation_id": "inv",
        "author": "bot",
        "text": "Hel",
    }


async def test_partials_that_meet_in_a_flush_go_out_joined_and_before_the_stored_event(
    connect: Connect, owned: str, alice: User, live: LivePipeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    publish_partial = live.publish_partial
    monkeypatch.setattr(live, "linger", 0.2)  # everything below lands in one flush
    socket = await connect(alice, owned)
    await hello(socket)
    run = {"run_id": 7, "invocation_id": "inv"}
    for text in ("Hel", "lo", " world"):
        await publish_partial(session_id=owned, **run, author="bot", text=text)
    await publish_partial(session_id=owned, **run, author="helper", text="!")
    await events(owned, 1)  # the stored event that replaces them
    first, second, third = [await receive(socket) for _ in range(3)]
    assert first == {"type": "partial", **run, "author": "bot", "text": "Hello world"}
    assert second == {"type": "partial", **run, "author": "helper", "text": "!"}
    assert third["type"] == "changes" and [i["kind"] for i in third["items"]] == ["event"]
    await nothing_more(socket)


@pytest.mark.parametrize("live_flusher", [True, False], ids=["flushed", "sent-at-once"])
async def test_a_megabyte_of_partial_text_goes_out_in_messages_daphne_can_send(
    connect: Connect, owned: str, alice: User, live: LivePipeline, live_flusher: bool
) -> None:
    """daphne refuses to send a message over its limit (the partial was dropped, logged as an
    error): a long chunk goes out in several messages within ``MAX_SENT_BYTES`` as the
    consumer encodes them, whose texts make the chunk again."""
    socket = await connect(alice, owned)
    await hello(socket)
    text = "😀<b>\x01" * 40_000  # 1.2 MB of JSON as sent: twelve bytes for each emoji
    run = {"run_id": 7, "invocation_id": "inv", "author": "bot"}
    if not live_flusher:
        await live.stop()
    await live.publish_partial(session_id=owned, **run, text=text)
    received: list[dict[str, Any]] = []
    while sum(len(m["text"]) for m in received) < len(text):
        received.append(await receive(socket))
    assert len(received) > 1
    for message in received:
        assert {k: message[k] for k in run} == run and message["type"] == "partial"
        assert len(json.dumps(message).encode()) <= MAX_SENT_BYTES
    assert "".join(m["text"] for m in received) == text
    await nothing_more(socket)


# ── Frames ──────────────────────────────────────────────────────────────────────────────────
@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ("{not json", "bad_json"),
        ("[1, 2]", "bad_json"),
        ('{"type": "ping", "x": NaN}', "bad_json"),
        ("[" * 5000 + "]" * 5000, "bad_json"),
        ('{"after_seq": 1}', "bad_request"),
        ('{"type": "hello", "after_seq": -1}', "bad_request"),
        ('{"type": "hello", "after_seq": true}', "bad_request"),
        ('{"type": "chat.send", "text": ""}', "bad_request"),
        (
            '{"type": "state.edit", "delta": {}, "expected_version": 0, "reason": "x"}',
            "bad_request",
        ),
        ('{"type": "launch.missiles"}', "unknown_type"),
        ('{"type": "ping", "pad": "' + "x" * MAX_FRAME_BYTES + '"}', "too_large"),
        ('{"type": "ping", "pad": "' + "é" * (MAX_FRAME_BYTES // 2) + '"}', "too_large"),
    ],
)
async def test_bad_frames_get_an_error_and_the_socket_stays_open(
    connect: Connect, owned: str, alice: User, frame: str, code: str
) -> None:
    socket = await connect(alice, owned)
    await socket.send_to(text_data=frame)
    answer = await receive(socket)
    assert (answer["type"], answer["code"]) == ("error", code), answer
    await nothing_more(socket)


async def test_binary_frames_are_refused(connect: Connect, owned: str, alice: User) -> None:
    socket = await connect(alice, owned)
    await socket.send_to(bytes_data=json.dumps({"type": "ping"}).encode())
    assert (await receive(socket))["code"] == "bad_json"
    await nothing_more(socket)


async def test_a_frame_just_under_the_cap_is_served(
    connect: Connect, owned: str, alice: User
) -> None:
    socket = await connect(alice, owned)
    frame = json.dumps({"type": "ping", "pad": ""})
    frame = frame.replace('""', '"' + "x" * (MAX_FRAME_BYTES - len(frame)) + '"')
    assert len(frame.encode()) == MAX_FRAME_BYTES
    await socket.send_to(text_data=frame)
    assert await receive(socket) == {"type": "pong"}


async def test_messages_past_the_rate_limit_are_refused(
    connect: Connect, owned: str, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [1000.0]
    monkeypatch.setattr(SessionConsumer, "clock", staticmethod(lambda: now[0]))
    socket = await connect(alice, owned)
    for _ in range(SessionConsumer.burst):
        await socket.send_json_to({"type": "ping"})
        assert await receive(socket) == {"type": "pong"}
    await socket.send_json_to({"type": "ping"})
    assert (await receive(socket))["code"] == "rate_limited"
    now[0] += 1.0  # one second refills ``rate`` tokens
    for _ in range(int(SessionConsumer.rate)):
        await socket.send_json_to({"type": "ping"})
        assert await receive(socket) == {"type": "pong"}
    await socket.send_json_to({"type": "ping"})
    assert (await receive(socket))["code"] == "rate_limited"


# ── Answers carry the request's id ─────────────────────────────────────────────────────────
async def test_every_answer_carries_its_requests_id(
    connect: Connect, owned: str, alice: User, operator_user: User
) -> None:
    """Answers are matched to requests by the client's ``req``, whatever their kind or order:
    a pong, an ack, a refusal for a bad field and one for want of permission."""
    socket = await connect(alice, owned)
    await hello(socket)
    frames = [
        ({"type": "ping", "req": "p-1"}, "pong"),
        ({"type": "state.edit", "req": "e-1", "delta": {"a": 1}, "expected_version": 0,
          "reason": "x"}, "error"),  # alice is no operator: forbidden
        ({"type": "run.cancel", "req": "c-1", "run_id": 0}, "error"),  # bad_request
        ({"type": "ping", "req": "\U0001f600 " + "x" * 126}, "pong"),
    ]  # fmt: skip
    for frame, kind in frames:
        await socket.send_to(text_data=json.dumps(frame))
        answer = await receive(socket)
        assert (answer["type"], answer.get("req")) == (kind, frame["req"]), answer
    await socket.send_to(text_data=json.dumps({"type": "ping"}))
    assert await receive(socket) == {"type": "pong"}  # no id asked, none given
    await nothing_more(socket)


@pytest.mark.parametrize("req", [7, "", "x" * 129, "a\x00b", "\ud800"])
async def test_a_bad_request_id_is_a_bad_request_without_an_id(
    connect: Connect, owned: str, alice: User, req: Any
) -> None:
    socket = await connect(alice, owned)
    await socket.send_to(text_data=json.dumps({"type": "ping", "req": req}))
    answer = await receive(socket)
    assert (answer["type"], answer["code"]) == ("error", "bad_request"), answer
    assert "req" not in answer and "'req'" in answer["message"]
    await nothing_more(socket)
