"""The sessions list's websocket against the real ASGI application and the real pipeline:
who gets in, which sessions each reader is told of (and how often), what else it answers."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth.models import User

from agentdash.asgi import application
from agentdash.live.groups import SESSIONS_LIST_GROUP, TOUCHED_IDS_MAX, touched_message
from agentdash.live.list_consumer import SessionsListConsumer
from agentdash.live.pipeline import LivePipeline
from tests.agentdash.live.conftest import ORIGIN, WAIT, closed_with, login_cookie, receive
from tests.agentdash.stored import session_of, store_event

pytestmark = pytest.mark.django_db(transaction=True)

Listen = Callable[[User | None], Awaitable[WebsocketCommunicator]]
WINDOW = 0.05  # seconds the consumer gathers notices for (1 s on a server)


@pytest.fixture
async def listen(live: LivePipeline, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Listen]:
    """``await listen(user)``: the list's socket of the real application, as ``user``."""
    monkeypatch.setattr(SessionsListConsumer, "window", WINDOW)
    opened: list[WebsocketCommunicator] = []

    async def open_socket(user: User | None) -> WebsocketCommunicator:
        headers = [(b"origin", ORIGIN.encode())]
        if user is not None:
            cookie = await sync_to_async(login_cookie)(user)
            headers.append((b"cookie", f"{settings.SESSION_COOKIE_NAME}={cookie}".encode()))
        socket = WebsocketCommunicator(application, "/ws/sessions/", headers)
        opened.append(socket)
        connected, _ = await socket.connect(timeout=WAIT)
        assert connected
        return socket

    yield open_socket
    for socket in opened:
        with contextlib.suppress(Exception):
            await socket.disconnect(timeout=WAIT)


async def told(socket: WebsocketCommunicator) -> dict[str, object]:
    """The next ``sessions.changed`` message (pongs and the like skipped)."""
    while True:
        message = await receive(socket)
        if message["type"] == "sessions.changed":
            return message


async def quiet(socket: WebsocketCommunicator) -> None:
    """Nothing was told before now: waits past a window, then a ping's pong comes next."""
    await socket.send_json_to({"type": "ping"})
    assert await receive(socket) == {"type": "pong"}
    assert await socket.receive_nothing(timeout=WINDOW * 4)
    await socket.send_json_to({"type": "ping"})
    assert await receive(socket) == {"type": "pong"}


async def test_anonymous_visitors_are_closed_with_4403(listen: Listen) -> None:
    socket = await listen(None)
    assert await closed_with(socket) == 4403


async def test_a_reader_is_told_of_their_own_sessions_only(
    listen: Listen, alice: User, bob: User
) -> None:
    mine = (await sync_to_async(session_of)(alice, "list-alice")).id
    theirs = (await sync_to_async(session_of)(bob, "list-bob")).id
    socket = await listen(alice)
    assert await receive(socket) == {"type": "listening"}

    await sync_to_async(store_event)(theirs, "not for alice")
    await quiet(socket)
    await sync_to_async(store_event)(mine, "hello")
    await sync_to_async(store_event)(theirs, "still not for alice")

    assert await told(socket) == {"type": "sessions.changed", "ids": [mine], "many": False}


async def test_an_operator_is_told_of_every_session_in_one_message_a_window(
    listen: Listen, alice: User, bob: User, operator_user: User
) -> None:
    a = (await sync_to_async(session_of)(alice, "list-a")).id
    b = (await sync_to_async(session_of)(bob, "list-b")).id
    socket = await listen(operator_user)
    assert await receive(socket) == {"type": "listening"}
    layer = get_channel_layer()

    await layer.group_send(SESSIONS_LIST_GROUP, touched_message([a]))
    await layer.group_send(SESSIONS_LIST_GROUP, touched_message([b, "no-such-session"]))

    assert await told(socket) == {"type": "sessions.changed", "ids": [a, b], "many": False}
    await quiet(socket)


async def test_a_flood_of_sessions_is_said_as_many(listen: Listen, operator_user: User) -> None:
    socket = await listen(operator_user)
    assert await receive(socket) == {"type": "listening"}
    ids = [f"flood-{i}" for i in range(TOUCHED_IDS_MAX + 1)]

    await get_channel_layer().group_send(SESSIONS_LIST_GROUP, touched_message(ids))

    assert await told(socket) == {"type": "sessions.changed", "ids": [], "many": True}


async def test_a_deactivated_reader_is_closed_at_the_next_notice(
    listen: Listen, alice: User
) -> None:
    mine = (await sync_to_async(session_of)(alice, "list-gone")).id
    socket = await listen(alice)
    assert await receive(socket) == {"type": "listening"}
    await User.objects.filter(pk=alice.pk).aupdate(is_active=False)

    await get_channel_layer().group_send(SESSIONS_LIST_GROUP, touched_message([mine]))

    assert await closed_with(socket) == 4403


@pytest.mark.parametrize(
    "frame",
    ['{"type": "hello", "after_seq": 0}', "not json", "\ud800", "[]", "null", '"' + "x" * 50_000],
)
async def test_it_only_listens(listen: Listen, alice: User, frame: str) -> None:
    socket = await listen(alice)
    assert await receive(socket) == {"type": "listening"}

    await socket.send_to(text_data=frame)

    answer = await receive(socket)
    assert answer["type"] == "error" and answer["code"] == "bad_request", answer
    await socket.send_json_to({"type": "ping"})
    assert await receive(socket) == {"type": "pong"}
