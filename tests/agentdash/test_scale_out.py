"""Scale-out, for real: two daphne hosts behind HAProxy (the configuration docs/DEPLOY.md
ships, started by ``scripts/haproxy.sh``), two Celery worker hosts, one PostgreSQL and one
Redis — each host a process group of its own, killed whole.

Which daphne takes a connection is chosen the way an operator chooses it: through HAProxy's
runtime API (every other daphne drained), and read back from the daphnes' own access logs.
A worker runs one run at a time (``--concurrency 1``, one message prefetched), and the gate
agent's tool holds its run while the test says so: which worker takes a run is thereby known.

- a socket on daphne A sees live the spans of a run that daphne B queued and a worker ran;
- a callback switched through B reaches runs on each of the two workers;
- a daphne killed: its socket moves through the balancer to the other, and the changes it
  gets from there continue the seqs with no gap and nothing twice;
- a worker killed inside a run: the run is taken up by the other and succeeds;
- Chromium, through the balancer on daphne A, watches live a run daphne B queued: its
  running tool span on the timeline, then the answer and every span ended.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.agentdash.dashboard.browser.conftest import _watched
from tests.agentdash.dashboard.browser.harness import CHROMIUM, CHROMIUM_ARGS, LiveServer
from tests.agentdash.live_harness import PASSWORD, Browserless, LiveClient, free_port
from tests.agentdash.scale_harness import (
    Balancer,
    Host,
    Hosts,
    pids_entered,
    scale_backends,
    scale_env,
    unavailable,
)

pytestmark = [pytest.mark.slow, pytest.mark.own_servers]

GATE_AGENT = "celery_agent"
AGENTS = ",".join([
    "agentdash.demo.capital:root_agent",
    "agentdash.demo.support_desk:root_agent",
    "agentdash.demo.data_agent:root_agent",
    "agentdash.demo.analyst:root_agent",
    "tests.agentdash.runs.celery_agents:root_agent",
])  # fmt: skip
DISCLAIMER = "(checked by after_model)"
T = TypeVar("T")


@dataclass
class Cluster:
    hosts: Hosts
    lb: Balancer
    daphnes: dict[str, Host]  # web1 (A), web2 (B): HAProxy's names
    workers: list[Host]
    gate: Path
    database_url: str

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(self.database_url) as conn:
            return list(conn.execute(sql, params).fetchall())

    def log(self, host: Host) -> str:
        return (self.hosts.tmp / f"{host.name}.log").read_text(errors="replace")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    tmp = tmp_path_factory.mktemp("scale-out")
    gate = tmp / "gate"
    gate.mkdir()
    with scale_backends() as backends:
        env = scale_env(
            backends, tmp / "var", AGENTDASH_AGENTS=AGENTS, AGENTDASH_TEST_GATE_DIR=str(gate),
            # A killed worker's run is taken up 3 s after its last heartbeat, not 10.
            AGENTDASH_RUN_HEARTBEAT_S="1", AGENTDASH_RUN_STALE_AFTER_S="3",
            AGENTDASH_REAPER_INTERVAL_S="1",
        )  # fmt: skip
        hosts = Hosts(tmp, env)
        lb = Balancer(tmp / "haproxy", free_port())
        try:
            workers = [hosts.worker("worker-1"), hosts.worker("worker-2")]
            daphnes = {"web1": hosts.daphne("daphne-a"), "web2": hosts.daphne("daphne-b")}
            lb.start(list(daphnes.values()))
            yield Cluster(hosts, lb, daphnes, workers, gate, backends[0])
        except BaseException as error:
            raise AssertionError(f"{error!r}\n{hosts.logs()}") from error
        finally:
            lb.stop()
            hosts.stop()


def within(cluster: Cluster, check: Callable[[], T | None], what: str, timeout: float = 120) -> T:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            runs = cluster.query("SELECT id, status, worker, attempt FROM runs_run ORDER BY id")
            raise AssertionError(f"gave up waiting for {what}; runs {runs}\n{cluster.hosts.logs()}")
        time.sleep(0.1)


def asking(word: str) -> str:
    """The message that has the gate agent's offline model call its tool — which it asks
    about the whole message."""
    return f"Please look up the topic {word}"


def held(cluster: Cluster, word: str) -> Path:
    """Hold the gate agent's tool for ``asking(word)`` (its file; unlink it to let go)."""
    hold = cluster.gate / f"hold-{asking(word)}"
    hold.touch()
    return hold


def gate_chat(cluster: Cluster, user: Browserless, word: str) -> tuple[str, int]:
    """A new session of the gate agent asking about ``word``; once a worker is inside the
    tool: (the session, that worker's pid)."""
    session = user.new_chat(GATE_AGENT, asking(word), settled=False)
    (pid,) = within(cluster, lambda: entered(cluster, word), f"a worker in {word}")
    return session, pid


def entered(cluster: Cluster, word: str) -> set[int]:
    return pids_entered(cluster.gate, asking(word))


def run_of(client: LiveClient) -> int:
    runs = [item["data"]["id"] for _, item in client.items("run") if item["data"]]
    assert runs, client.types()
    return int(runs[-1])


def worker_pid(cluster: Cluster, run_id: int) -> int:
    ((worker,),) = cluster.query("SELECT worker FROM runs_run WHERE id = %s", run_id)
    return int(worker.rsplit(":", 1)[1])


def seqs(client: LiveClient) -> list[int]:
    return [int(item["seq"]) for _, item in client.items()]


async def chat(client: LiveClient, text: str) -> tuple[int, str]:
    """Send ``text`` on the socket; once its run ended: (run id, the final answer's HTML)."""
    client_id = uuid.uuid4().hex
    await client.send({"type": "chat.send", "text": text, "client_id": client_id})
    accepted = await client.message("chat.accepted", client_id=client_id)
    run_id = int(accepted["run_id"])
    assert await client.run_ended(run_id) == "succeeded"

    def final(_: Any) -> str | None:
        for _at, item in client.items("event"):
            data = item["data"]
            mine = data["invocation_id"] == accepted["invocation_id"]
            if mine and data["author"] != "user" and data["final"]:
                return str(data["html"])
        return None

    answer: str = await client.wait_for(final, "the final event")
    return run_id, answer


def run(cluster: Cluster, scenario: Callable[[], Any]) -> None:
    try:
        asyncio.run(asyncio.wait_for(scenario(), 300))
    except BaseException as error:
        raise AssertionError(f"{error!r}\n{cluster.hosts.logs()}") from error


def test_a_socket_on_one_daphne_sees_live_the_run_another_daphne_queued(
    cluster: Cluster,
) -> None:
    lb, a, b = cluster.lb, cluster.daphnes["web1"], cluster.daphnes["web2"]
    alice = Browserless(lb.url)
    hold = held(cluster, "tea")
    lb.only("web2")
    alice.log_in("alice")
    session, worker = gate_chat(cluster, alice, "tea")  # queued by B, inside a worker's tool

    async def scenario() -> None:
        lb.only("web1")
        client = LiveClient(alice, session)
        await client.open()
        try:
            await client.hello()
            replayed = len(client.items())
            hold.unlink()
            run_id = run_of(client)
            assert await client.run_ended(run_id) == "succeeded"
            live = [
                item["data"]
                for r in client.received
                if r.message.get("type") == "changes" and not r.message.get("replay")
                for item in r.message["items"]
                if item["kind"] == "span"
            ]
            # The tool's span ended, the model's next call and the invocation's end: live.
            names = {span["name"] for span in live if span["end_time"] is not None}
            assert "execute_tool look_up_topic" in names, names
            assert f"invoke_agent {GATE_AGENT}" in names, names
            assert len(client.items()) > replayed
            assert worker_pid(cluster, run_id) == worker
        finally:
            await client.close()

    run(cluster, scenario)
    lb.all_ready()
    # The daphnes' own logs say who did what: B took the chat, A held the socket.
    assert f"WSCONNECT /ws/sessions/{session}/" in cluster.log(a)
    assert f"WSCONNECT /ws/sessions/{session}/" not in cluster.log(b)
    assert '"POST /sessions/" 302' in cluster.log(b)


def test_a_switch_made_through_one_daphne_reaches_runs_on_either_worker(
    cluster: Cluster,
) -> None:
    """operator, on B, switches ``add_disclaimer`` off for alice's session; alice's next two
    answers come without it — one run on each worker (the other held in the gate agent's
    tool meanwhile)."""
    lb = cluster.lb
    alice, operator = Browserless(lb.url), Browserless(lb.url)
    alice.log_in("alice")
    session = alice.new_chat("capital_agent", "What is the capital of France?")
    first = alice.snapshot(session)
    assert DISCLAIMER in str(first["events"])  # on by default
    holds = [held(cluster, "mint"), held(cluster, "sage")]

    async def scenario() -> None:
        lb.only("web2")
        operator.log_in("operator")
        switch = LiveClient(operator, session)
        await switch.open()
        lb.all_ready()
        chat_socket = LiveClient(alice, session)
        await chat_socket.open()
        try:
            await switch.hello()
            await switch.send({
                "type": "callback.toggle", "agent": "capital_agent",
                "callback": "add_disclaimer", "enabled": False, "scope": "session",
                "reason": "scale-out test",
            })  # fmt: skip
            ack = await switch.message("ack", ref="callback.toggle")
            assert ack["setting"]["enabled"] is False
            await chat_socket.hello()
            pids = {w.proc.pid for w in cluster.workers}
            _, busy = gate_chat(cluster, alice, "mint")  # one worker held…
            run_id, answer = await chat(chat_socket, "And the capital of Japan?")
            ran = [worker_pid(cluster, run_id)]
            assert "Tokyo" in answer and DISCLAIMER not in answer, answer
            assert ran == list(pids - {busy})  # …so the other ran it
            _, other = gate_chat(cluster, alice, "sage")  # that one held, the first let go
            assert other == ran[0]
            holds[0].unlink()
            run_id, answer = await chat(chat_socket, "And the capital of Italy?")
            ran.append(worker_pid(cluster, run_id))
            assert "Rome" in answer and DISCLAIMER not in answer, answer
            assert sorted(ran) == sorted(pids)
        finally:
            for hold in holds:
                hold.unlink(missing_ok=True)
            await switch.close()
            await chat_socket.close()

    run(cluster, scenario)
    assert f"WSCONNECT /ws/sessions/{session}/" in cluster.log(cluster.daphnes["web2"])


def test_a_daphne_killed_moves_its_socket_to_the_other_with_no_gap_in_seqs(
    cluster: Cluster,
) -> None:
    lb, a, b = cluster.lb, cluster.daphnes["web1"], cluster.daphnes["web2"]
    alice = Browserless(lb.url)
    alice.log_in("alice")
    hold = held(cluster, "rye")
    session, _ = gate_chat(cluster, alice, "rye")

    async def scenario() -> None:
        lb.only("web1")
        before = LiveClient(alice, session)
        await before.open()
        lb.all_ready()
        after = LiveClient(alice, session)
        try:
            await before.hello()
            assert f"WSCONNECT /ws/sessions/{session}/" in cluster.log(a)
            a.kill()  # the host, with every process it had
            await before.wait_for(lambda _: before._reader and before._reader.done(),
                                  "the socket on A to close")  # fmt: skip
            last = max(seqs(before))
            await after.open()  # through the balancer: A is gone, so B
            await after.hello(after_seq=last)
            hold.unlink()
            assert await after.run_ended(run_of(before)) == "succeeded"
            got = seqs(before) + seqs(after)
            ((stored,),) = cluster.query(
                "SELECT last_seq FROM changes_sessionseq WHERE session_id = %s", session
            )
            assert sorted(got) == list(range(1, stored + 1)), (seqs(before), seqs(after))
        finally:
            hold.unlink(missing_ok=True)
            await before.close()
            await after.close()

    run(cluster, scenario)
    assert f"WSCONNECT /ws/sessions/{session}/" in cluster.log(b)
    # A comes back on its address; the balancer sends it work again once it answers checks.
    cluster.daphnes["web1"] = cluster.hosts.daphne("daphne-a2", port=int(a.address.split(":")[1]))


def test_a_worker_killed_inside_a_run_leaves_it_to_the_other(cluster: Cluster) -> None:
    alice = Browserless(cluster.lb.url)
    alice.log_in("alice")
    hold = held(cluster, "oak")
    session, pid = gate_chat(cluster, alice, "oak")
    (victim,) = [w for w in cluster.workers if w.proc.pid == pid]
    (survivor,) = [w for w in cluster.workers if w is not victim]

    async def scenario() -> None:
        client = LiveClient(alice, session)
        await client.open()
        try:
            await client.hello()
            victim.kill()
            hold.unlink()  # the other worker runs it again from the start, unheld
            run_id = run_of(client)
            assert await client.run_ended(run_id) == "succeeded"
            ((worker, attempt),) = cluster.query(
                "SELECT worker, attempt FROM runs_run WHERE id = %s", run_id
            )
            assert (int(worker.rsplit(":", 1)[1]), attempt) == (survivor.proc.pid, 2)
        finally:
            hold.unlink(missing_ok=True)
            await client.close()

    run(cluster, scenario)


@pytest.fixture
def chromium() -> Iterator[Any]:
    """Debian's Chromium (scripts/chromium.sh), driven by Playwright, for the one test here."""
    if not Path(CHROMIUM).is_file():
        unavailable(f"{CHROMIUM} is missing (scripts/chromium.sh installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        browser = driver.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield browser
        finally:
            browser.close()


def test_a_browser_through_the_balancer_watches_live_a_run_the_other_daphne_queued(
    cluster: Cluster, chromium: Any
) -> None:
    """Last: Playwright's driver keeps an event loop in this thread while it runs."""
    lb, a = cluster.lb, cluster.daphnes["web1"]
    within(cluster, lambda: lb.up("web1"), "daphne A back in the balancer")
    alice = Browserless(lb.url)
    hold = held(cluster, "elm")
    lb.only("web2")
    alice.log_in("alice")
    session, _ = gate_chat(cluster, alice, "elm")
    lb.only("web1")
    server = LiveServer(url=lb.url, process=a.proc, log=cluster.hosts.tmp / f"{a.name}.log",
                        password=PASSWORD)  # fmt: skip
    try:
        with _watched(chromium, server) as browser:
            browser.log_in("alice")
            browser.goto(f"/sessions/{session}/")
            page = browser.page
            page.wait_for_selector("#connection[data-state='live']", timeout=30_000)
            tool = page.locator("#span-tree .span[data-kind='tool']")
            assert tool.first.get_attribute("data-state") == "running"
            hold.unlink()
            page.locator(".msg-agent:not(.streaming) .msg-body.md",
                         has_text="The library says").first.wait_for(timeout=60_000)  # fmt: skip
            page.locator("#span-tree .span[data-state='running']").first.wait_for(
                state="detached", timeout=60_000
            )
            assert tool.count() == 1
            browser.console.assert_clean()
    finally:
        hold.unlink(missing_ok=True)
        lb.all_ready()
    assert f"WSCONNECT /ws/sessions/{session}/" in cluster.log(a)
