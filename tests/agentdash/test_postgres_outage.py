"""A real PostgreSQL outage, as the site's visitors see it: 503 with ``Retry-After`` while
the server is stopped, then 200s again once it is back — no restart of AgentDash. A live
socket stays open and answers each request with ``error`` ``unavailable``; a run inside its
tool when the database went away resumes once it is back (attempt 2, no stale-heartbeat
wait) and its end reaches the same socket.

A private cluster (``scripts/postgres.sh`` with its own ``AGENTDASH_PG_DIR`` and port, never
the shared one other tests use), migrated and seeded, behind two daphne processes: one with
DEBUG on and a connection per request (no pool), one with DEBUG off and the documented
connection pool (``DATABASE_POOL_MAX_SIZE``, health-checked). A signed-in user and the demo
operator load pages; the server is stopped for ~10 s while they keep asking; then started
again.

Without PostgreSQL a developer's run skips; in CI (``CI`` set) it fails instead.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from tests.agentdash.ingest.otlp_bodies import request_of, span
from tests.agentdash.live_harness import (
    ROOT,
    Browserless,
    LiveClient,
    Processes,
    base_env,
    free_port,
    in_ci,
    manage,
)

pytestmark = [pytest.mark.slow, pytest.mark.own_servers]

OUTAGE_S = 10.0
GATED_AGENT = "tests.agentdash.runs.celery_agents:root_agent"
PAGES = ("/", "/admin/", "/admin/controls/policy/", "/login/?next=/")


@dataclass
class Cluster:
    env: dict[str, str]
    url: str

    def run(self, command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(ROOT / "scripts" / "postgres.sh"), command],
            cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    # The owner (``postgres`` when we are root) must be able to enter the parent directory.
    parent = Path(tempfile.mkdtemp(prefix="agentdash-outage-"))
    parent.chmod(0o755)
    env = {**os.environ, "AGENTDASH_PG_DIR": str(parent / "pg")}
    env["AGENTDASH_PG_PORT"] = str(free_port())
    found = Cluster(env, "")
    started = found.run("start")
    if started.returncode != 0:
        shutil.rmtree(parent, ignore_errors=True)
        why = f"a private PostgreSQL could not be started: {started.stderr.strip()[-500:]}"
        if in_ci():
            pytest.fail(why)
        pytest.skip(why)
    found.url = started.stdout.strip()
    try:
        yield found
    finally:
        found.run("stop")
        shutil.rmtree(parent, ignore_errors=True)


@dataclass
class Answer:
    status: int
    retry_after: str | None
    body: str


TRACE = "5bf92f3577b34da6a3ce929d0e0e4736"


def otlp_post(url: str, key: str, body: bytes) -> Answer:
    """An OTLP/HTTP export as the official exporter sends it (protobuf)."""
    request = urllib.request.Request(
        f"{url}/v1/traces",
        data=body,
        headers={"Content-Type": "application/x-protobuf", "Authorization": f"Bearer {key}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return Answer(response.status, response.headers.get("Retry-After"), "")
    except urllib.error.HTTPError as error:
        return Answer(error.code, error.headers.get("Retry-After"), error.read().decode())


def fetch(user: Browserless, path: str) -> Answer:
    try:
        with user.opener.open(f"{user.url}{path}", timeout=30) as response:
            body = response.read().decode()
            return Answer(response.status, response.headers.get("Retry-After"), body)
    except urllib.error.HTTPError as error:
        return Answer(error.code, error.headers.get("Retry-After"), error.read().decode())


async def new_socket_refusal(user: Browserless, session_id: str) -> tuple[str, int | None]:
    """(the error code a new socket gets, its close code)."""
    ws = await connect(
        f"{user.url.replace('http://', 'ws://')}/ws/sessions/{session_id}/",
        origin=user.url,  # type: ignore[arg-type]
        additional_headers={"Cookie": user.cookie_header()},
        open_timeout=30,
    )
    said = json.loads(await asyncio.wait_for(ws.recv(), 30))
    with pytest.raises(ConnectionClosed) as closed:
        await asyncio.wait_for(ws.recv(), 30)
    return said.get("code"), closed.value.rcvd.code if closed.value.rcvd else None


async def test_an_outage_gives_503_pages_unavailable_sockets_and_no_stuck_run(
    cluster: Cluster, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    gate.mkdir()
    (gate / "hold").touch()  # the gated agent's tool waits while this exists
    env = base_env(
        DATABASE_URL=cluster.url,
        AGENTDASH_VAR_DIR=str(tmp_path / "var"),
        AGENTDASH_AGENTS=f"agentdash.demo.capital:root_agent,{GATED_AGENT}",
        AGENTDASH_TEST_GATE_DIR=str(gate),
    )
    await asyncio.to_thread(manage, env, "migrate", "--noinput")
    await asyncio.to_thread(manage, env, "seed_demo")
    servers = Processes(tmp_path)
    client: LiveClient | None = None
    try:
        debug_on = await asyncio.to_thread(
            servers.daphne,
            "debug-on",
            {**env, "DATABASE_POOL_MAX_SIZE": "0", "DATABASE_CONN_MAX_AGE": "0"},
        )
        debug_off = await asyncio.to_thread(
            servers.daphne,
            "debug-off",
            {**env, "DEBUG": "0", "SECRET_KEY": "x" * 60},  # the pool, as documented
        )
        users = []
        for url in (debug_on, debug_off):
            for name in ("alice", "operator"):
                user = Browserless(url)
                await asyncio.to_thread(user.log_in, name)
                users.append(user)
        for user in users:
            assert (await asyncio.to_thread(fetch, user, PAGES[0])).status == 200
        # An outside agent's OTLP export: taken, refused with 503 while the database is away
        # (the exporters retry that), taken again after.
        made = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "manage.py", "ingest_key", "create", "--owner", "alice",
             "--project", "elsewhere"],
            cwd=ROOT, env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        key = made.stdout.strip()
        otlp = [
            request_of(span(TRACE, f"{n:016x}", "invoke_agent far")).SerializeToString()
            for n in range(1, 4)
        ]
        assert (await asyncio.to_thread(otlp_post, debug_off, key, otlp[0])).status == 200

        # A chat whose run is inside its tool when the database goes away.
        chatter = Browserless(debug_off)
        await asyncio.to_thread(chatter.log_in, "alice")
        session_id = await asyncio.to_thread(chatter.new_chat, "celery_agent")
        client = LiveClient(chatter, session_id)
        await client.open()
        await client.hello()
        await client.send({"type": "chat.send", "text": "Look up the topic tea", "client_id": "c1"})
        run_id = int((await client.message("chat.accepted", client_id="c1"))["run_id"])
        await client.wait_for(lambda _: any(gate.glob("entered-*")), "the tool to be entered")

        stopped = await asyncio.to_thread(cluster.run, "stop")
        assert stopped.returncode == 0, stopped.stderr
        down_at = time.monotonic()
        during: list[tuple[str, str, int]] = []
        refusals = 0
        while time.monotonic() - down_at < OUTAGE_S:
            for user in users:
                for path in PAGES:
                    answer = await asyncio.to_thread(fetch, user, path)
                    during.append((user.url, path, answer.status))
                    if path.startswith("/login/") and answer.status == 200:
                        continue  # the login form needs no database
                    assert answer.status == 503, (user.url, path, answer.status, answer.body[-500:])
                    assert answer.retry_after == "5"
                    assert "Briefly unavailable" in answer.body
            exported = await asyncio.to_thread(otlp_post, debug_off, key, otlp[1])
            assert (exported.status, exported.retry_after) == (503, "5"), exported
            assert "the database is unreachable" in exported.body  # a google.rpc.Status
            # The socket stays open; each request is refused as unavailable, nothing changed.
            seen = len(client.received)
            await client.send({"type": "chat.send", "text": "Anyone there?"})
            refused = await client.wait_for(
                lambda received, seen=seen: next(
                    (r.message for r in received[seen:] if r.message.get("type") == "error"),
                    None,
                ),
                "an error for a request during the outage",
            )
            assert refused["code"] == "unavailable", refused
            refusals += 1
            if time.monotonic() - down_at > OUTAGE_S / 2:
                (gate / "hold").unlink(missing_ok=True)  # the tool returns: nowhere to store it
            await asyncio.sleep(0.5)
        assert len(during) >= 4 * len(users) * len(PAGES) and refusals >= 4
        # A socket opened meanwhile (signed in: the login is read from the database) is told
        # why and closed with 4503 (try again later), not failed with a server error.
        assert await new_socket_refusal(chatter, session_id) == ("unavailable", 4503)

        started = await asyncio.to_thread(cluster.run, "start")
        assert started.returncode == 0, started.stderr
        back_at = time.monotonic()
        for user in users:
            for path in PAGES:
                answer = await asyncio.to_thread(fetch, user, path)
                assert answer.status == 200, (user.url, path, answer.status, answer.body[-500:])
        pages_s = time.monotonic() - back_at
        assert (await asyncio.to_thread(otlp_post, debug_off, key, otlp[2])).status == 200

        # The worker waited the outage out, queued its run again and resumed it: it ends
        # without the reaper's stale-heartbeat wait, on the same socket.
        assert await client.run_ended(run_id, timeout=120) == "succeeded"
        run_s = time.monotonic() - back_at
        told = [(at, i) for at, i in client.items("run") if i["data"]]  # (not superseded)
        (_, ended), *_ = [(at, item) for at, item in reversed(told) if item["data"]["id"] == run_id]
        assert ended["data"]["attempt"] == 2, ended
        # A change item is the run as it was when read: the requeue may show as "running" by
        # then, with the requeue's reason still in its error.
        why = [i["data"]["error"] for _, i in told if i["data"]["id"] == run_id]
        assert any("database was unreachable" in w for w in why), why
        assert not any("no heartbeat" in w for w in why), why  # not the reaper's doing
        await client.send({"type": "ping"})
        await client.message("pong")
        assert client._reader is not None and not client._reader.done()  # never reconnected
        print(
            f"outage {OUTAGE_S:.0f} s: {len(during)} requests, all 503 (login form 200), "
            f"{refusals} socket requests refused as unavailable; every page 200 again "
            f"{pages_s:.2f} s and the interrupted run ended {run_s:.1f} s after the server "
            "was ready"
        )
    except BaseException:
        print(servers.logs())
        raise
    finally:
        if client is not None:
            await client.close()
        servers.stop()
