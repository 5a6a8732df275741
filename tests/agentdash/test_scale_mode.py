"""The scale mode, end to end: PostgreSQL and Redis started by the project's scripts, a fresh
database migrated and seeded, TWO daphne processes (A, B) and TWO Celery worker processes.

alice chats on A; her socket on A gets the worker's spans live (started, then ended) and the
run's end. operator, on B, switches ``add_disclaimer`` off for the session: the switch travels
over Redis to the workers, and alice's next answer (run by a worker) comes without it.

Without PostgreSQL or Redis a developer's run skips; in CI (``CI`` set) it fails instead.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agentdash.live_harness import (
    Browserless,
    LiveClient,
    Processes,
    base_env,
    in_ci,
    manage,
    script,
)

pytestmark = [pytest.mark.slow, pytest.mark.own_servers]

AGENT = "capital_agent"
QUESTION = "What is the capital of France?"
DISCLAIMER = "(checked by after_model)"


def unavailable(why: str) -> None:
    if in_ci():
        pytest.fail(f"{why} (CI needs the scale-mode test)")
    pytest.skip(why)


@pytest.fixture(scope="module")
def backends() -> Iterator[tuple[str, str]]:
    """(PostgreSQL URL of a fresh database of this test, Redis URL)."""
    pg = script("postgres", "start")
    if pg.returncode != 0:
        unavailable(f"PostgreSQL could not be started: {pg.stderr.strip()[-500:]}")
    redis = script("redis", "start")
    if redis.returncode != 0:
        unavailable(f"Redis could not be started: {redis.stderr.strip()[-500:]}")
    import psycopg

    server_url = pg.stdout.strip()
    name = f"agentdash_scale_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    redis_url = redis.stdout.strip().rsplit("/", 1)[0] + "/14"  # a database for this test
    try:
        yield f"{server_url.rsplit('/', 1)[0]}/{name}", redis_url
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def spans(client: LiveClient, run_id: int) -> list[dict[str, Any]]:
    return [item["data"] for _, item in client.items("span") if item["data"]["run_id"] == run_id]


async def chat(alice: LiveClient, text: str) -> tuple[int, str]:
    """Send ``text``; once its run ended, (run id, the final answer's HTML)."""
    client_id = uuid.uuid4().hex
    await alice.send({"type": "chat.send", "text": text, "client_id": client_id})
    accepted = await alice.message("chat.accepted", client_id=client_id)
    run_id = int(accepted["run_id"])
    assert await alice.run_ended(run_id) == "succeeded"

    def final(_: Any) -> str | None:
        for _at, item in alice.items("event"):
            data = item["data"]
            mine = data["invocation_id"] == accepted["invocation_id"]
            if mine and data["author"] == AGENT and data["final"]:
                return str(data["html"])
        return None

    answer: str = await alice.wait_for(final, "the final event")
    return run_id, answer


async def scenario(url_a: str, url_b: str) -> None:
    alice_http = Browserless(url_a)
    alice_http.log_in("alice")
    session_id = alice_http.new_chat(AGENT)
    operator_http = Browserless(url_b)
    operator_http.log_in("operator")

    alice = LiveClient(alice_http, session_id)
    operator = LiveClient(operator_http, session_id)
    try:
        await alice.open()
        await alice.hello()
        first_run, first_answer = await chat(alice, QUESTION)
        assert "Paris" in first_answer and DISCLAIMER in first_answer

        # The worker's spans, live: each first seen started (no end), later ended.
        first = spans(alice, first_run)
        names = {s["name"] for s in first}
        assert f"invoke_agent {AGENT}" in names and "execute_tool get_capital_city" in names
        versions: dict[tuple[str, str], list[Any]] = {}
        for s in first:
            versions.setdefault((s["trace_id"], s["span_id"]), []).append(s["end_time"])
        # (An offline run is quick: spans that start and end within one ~50 ms flush are
        # sent once, ended; the invocation's root span always outlives the first flush.)
        assert any(ends[0] is None for ends in versions.values()), versions
        assert any(ends[0] is None and ends[-1] is not None for ends in versions.values())
        assert all(ends[-1] is not None for ends in versions.values())

        # operator, on B, switches the disclaimer off for this session.
        await operator.open()
        await operator.hello()
        toggle = {
            "type": "callback.toggle",
            "agent": AGENT,
            "callback": "add_disclaimer",
            "enabled": False,
            "scope": "session",
            "reason": "scale-mode test",
        }
        await operator.send(toggle)
        ack = await operator.message("ack", ref="callback.toggle")
        assert ack["setting"]["enabled"] is False
        assert ack["setting"]["session_id"] == session_id
        await asyncio.sleep(1.0)  # the change's way to the workers' switchboards (no timing)

        second_run, second_answer = await chat(alice, "And the capital of Japan?")
        assert "Tokyo" in second_answer and DISCLAIMER not in second_answer
        after_model = [
            s
            for s in spans(alice, second_run)
            if s["name"] == "callback add_disclaimer" and s["end_time"] is not None
        ]
        assert after_model
        assert {s["attributes"].get("agentdash.callback.outcome") for s in after_model} == {
            "disabled"
        }
        # The operator's socket on B saw the same run live.
        await operator.run_ended(second_run)
    finally:
        await alice.close()
        await operator.close()


def scale_env(backends: tuple[str, str], tmp_path: Path) -> dict[str, str]:
    """The servers' environment on this test's database and Redis (a queue of its own),
    migrated and seeded."""
    database_url, redis_url = backends
    env = base_env(
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        AGENTDASH_EXECUTOR="celery",
        CELERY_QUEUE=f"agentdash-scale-{os.getpid()}-{uuid.uuid4().hex[:8]}",
        AGENTDASH_VAR_DIR=str(tmp_path / "var"),
    )
    manage(env, "migrate", "--noinput")
    manage(env, "seed_demo")
    return env


def test_two_daphnes_two_workers_live_and_controlled(
    backends: tuple[str, str], tmp_path: Path
) -> None:
    env = scale_env(backends, tmp_path)
    procs = Processes(tmp_path)
    try:
        procs.worker("worker-1", env)
        procs.worker("worker-2", env)
        url_a = procs.daphne("daphne-a", env)
        url_b = procs.daphne("daphne-b", env)
        try:
            asyncio.run(asyncio.wait_for(scenario(url_a, url_b), 600))
        except BaseException as error:
            raise AssertionError(f"{error!r}\n{procs.logs()}") from error
    finally:
        procs.stop()


def test_a_waiting_run_outlives_every_daphne_and_worker_killed(
    backends: tuple[str, str], tmp_path: Path
) -> None:
    """alice's reimbursement waits for approval; the daphne she used and every worker are
    SIGKILLed. On a new daphne, with no worker alive yet, she approves a lower amount; a new
    worker resumes the run and the tool pays what she approved, once."""
    env = scale_env(backends, tmp_path)
    procs = Processes(tmp_path)
    try:
        procs.worker("worker-1", env)
        alice = Browserless(procs.daphne("daphne-a", env))
        alice.log_in("alice")
        session_id = alice.new_chat("support_desk", "Please reimburse invoice INV-1002")
        found = alice.snapshot(session_id)
        assert [run["status"] for run in found["runs"]] == ["waiting"], found["runs"]
        for _, proc in procs.procs:
            proc.send_signal(signal.SIGKILL)
        for _, proc in procs.procs:
            proc.wait(30)

        alice.url = procs.daphne("daphne-b", env)  # her login is in the database
        with alice.opener.open(f"{alice.url}/sessions/{session_id}/confirmations/") as got:
            (request,) = json.loads(got.read())["pending"]
        assert request["tool"] == "reimburse_invoice"
        assert request["payload"] == {"amount": 75.5, "currency": "EUR"}
        alice.post(
            f"/sessions/{session_id}/confirmations/{request['request_id']}/",
            f"/sessions/{session_id}/",
            {"decision": "approve", "payload": json.dumps({"amount": 40, "currency": "EUR"})},
        )
        procs.worker("worker-2", env)
        alice.runs_settled(session_id)
        found = alice.snapshot(session_id)
        assert [run["status"] for run in found["runs"]] == ["succeeded", "succeeded"]
        said = json.dumps([e for e in found["events"]])
        assert said.count("reimbursed: 40.00 EUR") >= 1 and "75.50 EUR reimbursed" not in said
    except BaseException as error:
        raise AssertionError(f"{error!r}\n{procs.logs()}") from error
    finally:
        procs.stop()
