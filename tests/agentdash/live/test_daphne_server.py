"""A real daphne (the embedded default, started as ``make run`` starts it): its first request
— any request — starts the process's background services; a frame over the protocol's 64 KB
cap gets an ``error`` and the socket stays; a message over daphne's 1 MB limit — in one frame
or in fragments — is refused with a **1009** close frame (autobahn's default would drop the
connection: 1006)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from pathlib import Path

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from agentdash.live.daphne_limits import MAX_MESSAGE_BYTES
from agentdash.live.protocol import MAX_FRAME_BYTES
from tests.agentdash.live_harness import ROOT, Browserless, Processes, embedded_env, sqlite_prepared


def manage_output(env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    return result.stdout


pytestmark = [pytest.mark.slow, pytest.mark.own_servers]


@pytest.fixture(scope="module")
def started(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """A daphne that has answered one page, nothing else (base URL, its environment)."""
    tmp: Path = tmp_path_factory.mktemp("daphne-server")
    env = embedded_env(tmp)
    sqlite_prepared(env)  # migrated and seeded, copied from the run's template
    procs = Processes(tmp)
    try:
        yield procs.daphne("daphne", env), env  # it waits for /login/ to answer
    finally:
        procs.stop()


@pytest.fixture(scope="module")
def server(started: tuple[str, dict[str, str]]) -> tuple[str, str, str]:
    """(base URL, a signed-in user's cookie header, one of their sessions)."""
    url, _ = started
    alice = Browserless(url)
    alice.log_in("alice")
    return url, alice.cookie_header(), alice.new_chat("capital_agent")


def test_the_first_page_starts_the_processs_services(started: tuple[str, dict[str, str]]) -> None:
    _, env = started
    deadline = time.monotonic() + 60
    while True:  # the health record is written at once when the services start
        health = json.loads(manage_output(env, "health", "--json"))
        services = {
            name: service["state"]
            for process in health["processes"]
            for name, service in process["services"].items()
        }
        if services.get("agentdash.reaper") == "running":
            break
        assert time.monotonic() < deadline, health
        time.sleep(0.2)
    assert services["agentdash.health"] == "running"
    assert services["agentdash.control-listener"] == "running"  # inline: it runs agents


@pytest.fixture
async def socket(server: tuple[str, str, str]) -> AsyncIterator[ClientConnection]:
    url, cookie, session_id = server
    ws = await connect(
        f"{url.replace('http://', 'ws://')}/ws/sessions/{session_id}/",
        origin=url,  # type: ignore[arg-type]
        additional_headers={"Cookie": cookie},
        max_size=None,
        open_timeout=30,
    )
    await ws.send(json.dumps({"type": "hello", "after_seq": 0}))
    while json.loads(await asyncio.wait_for(ws.recv(), 30))["type"] != "replay.done":
        pass
    yield ws
    await ws.close()


async def closed_code(ws: ClientConnection, message: str | Iterable[str]) -> int | None:
    """The code of the close frame the server answers ``message`` with. The server may
    close while a big message is still being sent: the send itself then fails, naming the
    frame it received."""
    with pytest.raises(ConnectionClosed) as closed:
        await ws.send(message)
        while True:
            await asyncio.wait_for(ws.recv(), 30)
    return closed.value.rcvd.code if closed.value.rcvd else None


async def test_a_frame_over_the_protocol_cap_is_an_error_and_the_socket_stays(
    socket: ClientConnection,
) -> None:
    await socket.send(json.dumps({"type": "ping", "pad": "x" * (MAX_FRAME_BYTES + 1)}))
    answer = json.loads(await asyncio.wait_for(socket.recv(), 30))
    assert (answer["type"], answer["code"]) == ("error", "too_large")
    await socket.send(json.dumps({"type": "ping"}))
    assert json.loads(await asyncio.wait_for(socket.recv(), 30)) == {"type": "pong"}


@pytest.mark.parametrize("size", [2 * MAX_MESSAGE_BYTES, 5 * MAX_MESSAGE_BYTES])
async def test_a_message_over_the_servers_limit_is_closed_with_1009(
    socket: ClientConnection, size: int
) -> None:
    assert await closed_code(socket, json.dumps({"type": "ping", "pad": "x" * size})) == 1009


async def test_a_fragmented_message_over_the_limit_is_closed_with_1009(
    socket: ClientConnection,
) -> None:
    chunk = "x" * (256 * 1024)
    # 2 MB in 8 frames, none of them over the limit
    assert await closed_code(socket, iter([chunk] * 8)) == 1009
