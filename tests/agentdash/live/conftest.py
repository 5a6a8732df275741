"""Fixtures for the live socket's tests: websocket clients of the real ASGI application,
signed in with a real session cookie, and helpers to read what they receive."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from agentdash.asgi import application
from agentdash.live.pipeline import LivePipeline
from tests.agentdash.runs.conftest import register  # noqa: F401 (a fixture: agents for a test)
from tests.waits import eventually  # noqa: F401 (this package's tests take it from here)

ORIGIN = "http://localhost"
WAIT = 10.0  # seconds: only bounds a wait for something that must happen; measures nothing


def login_cookie(user: User) -> str:
    client = Client()
    client.force_login(user)
    return str(client.cookies[settings.SESSION_COOKIE_NAME].value)


Connect = Callable[..., Awaitable[WebsocketCommunicator]]


@pytest.fixture
async def connect(live: LivePipeline) -> AsyncIterator[Connect]:
    """``await connect(user, session_id, origin=..., path=...)``: a websocket to the real
    application (the session's socket, or ``path``), with ``user``'s session cookie (none
    for ``None``); ``.accepted`` and ``.code`` tell how the handshake went. Closed after the
    test."""
    opened: list[WebsocketCommunicator] = []

    async def open_socket(
        user: User | None, session_id: str, *, origin: str = ORIGIN, path: str | None = None
    ) -> WebsocketCommunicator:
        headers = [(b"origin", origin.encode())]
        if user is not None:
            cookie = await sync_to_async(login_cookie)(user)
            headers.append((b"cookie", f"{settings.SESSION_COOKIE_NAME}={cookie}".encode()))
        path = path or f"/ws/sessions/{session_id}/"
        socket = WebsocketCommunicator(application, path, headers)
        opened.append(socket)
        socket.accepted, socket.code = await socket.connect(timeout=WAIT)  # type: ignore[attr-defined]
        return socket

    yield open_socket
    for socket in opened:
        with contextlib.suppress(Exception):
            await socket.disconnect(timeout=WAIT)


async def closed_with(socket: WebsocketCommunicator) -> int | None:
    """The close code the server sends next (fails on anything else)."""
    message = await socket.receive_output(timeout=WAIT)
    assert message["type"] == "websocket.close", message
    return message.get("code")


async def receive(socket: WebsocketCommunicator) -> dict[str, Any]:
    found: dict[str, Any] = await socket.receive_json_from(timeout=WAIT)
    return found


async def hello(socket: WebsocketCommunicator, after_seq: int = 0) -> tuple[list[dict], int]:
    """Send ``hello``; return the replayed items and ``replay.done``'s seq."""
    await socket.send_json_to({"type": "hello", "after_seq": after_seq})
    items: list[dict] = []
    while True:
        message = await receive(socket)
        if message["type"] == "replay.done":
            return items, message["seq"]
        assert message["type"] == "changes" and message["replay"] is True, message
        items.extend(message["items"])


async def changes_until(
    socket: WebsocketCommunicator, done: Callable[[list[dict]], bool]
) -> tuple[list[dict], int]:
    """Live items until ``done(items so far)``; also how many messages carried them."""
    items: list[dict] = []
    messages = 0
    while not done(items):
        message = await receive(socket)
        if message["type"] != "changes":
            continue
        assert message["replay"] is False
        items.extend(message["items"])
        messages += 1
    return items, messages


async def nothing_more(socket: WebsocketCommunicator) -> None:
    """Proves the server sent nothing before this point: a ping's pong comes next."""
    await socket.send_json_to({"type": "ping"})
    assert await receive(socket) == {"type": "pong"}
