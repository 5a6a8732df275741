"""Supervised background services: whatever stops one, it is started again with backoff,
every stop and restart is logged, and each process records its services' state where every
process reads it (``manage.py health``, ``/health/``)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import itertools
import json
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import AsyncClient

from agentdash.live.pipeline import live_pipeline
from agentdash.runs import streaming
from agentdash.runs.health import health_record_forever, processes_health
from agentdash.runs.host import RunHost
from agentdash.runs.supervisor import RESTARTING, RUNNING, STOPPED, Backoff, ServiceState, supervise
from tests.agentdash.runs.conftest import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

QUICK = Backoff(first=0.01, most=0.04, healthy_after=60.0)


async def test_a_service_that_stops_for_any_reason_is_started_again_with_backoff(
    caplog: pytest.LogCaptureFixture,
) -> None:
    starts: list[float] = []
    loop = asyncio.get_running_loop()

    async def flaky() -> None:
        starts.append(loop.time())
        if len(starts) == 1:
            raise ConnectionError("the layer went away")
        if len(starts) == 2:
            return  # a service that returns has stopped too
        if len(starts) == 3:
            inner = asyncio.create_task(asyncio.sleep(10))
            loop.call_soon(inner.cancel)  # a task it waits for is cancelled by someone else
            await inner
        await asyncio.Event().wait()

    state = ServiceState("flaky")
    changes: list[str] = []
    with caplog.at_level(logging.INFO, logger="agentdash.runs.supervisor"):
        task = asyncio.create_task(
            supervise(flaky, state, backoff=QUICK, changed=lambda: changes.append(state.state))
        )
        await wait_for(lambda: _true(len(starts) == 4), what="the fourth start")
        await asyncio.sleep(0)
        assert (state.state, state.restarts) == (RUNNING, 3)
        assert state.last_error == "cancelled from inside"
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    assert state.state == STOPPED
    assert changes == [RUNNING, RESTARTING] * 3 + [RUNNING, STOPPED]
    pauses = [b - a for a, b in itertools.pairwise(starts)]
    assert pauses[0] >= 0.01 and pauses[1] >= 0.02 and pauses[2] >= 0.04  # doubling, capped
    stops = [r.getMessage() for r in caplog.records if "stopped:" in r.getMessage()]
    assert "flaky stopped: ConnectionError: the layer went away" in stops[0]
    assert "returned" in stops[1] and "cancelled from inside" in stops[2]
    assert sum("flaky restarting" in r.getMessage() for r in caplog.records) == 3


async def test_a_stop_a_service_swallowed_stops_it_instead_of_starting_it_again() -> None:
    """A library the service awaited took the cancellation in (as redis-py's timeouts can),
    and the service then ended on its own: the supervisor stops, it does not restart it."""
    starts: list[int] = []

    async def swallows() -> None:
        starts.append(1)
        if len(starts) > 1:  # (a restart would wait to be cancelled: the test can end)
            await asyncio.Event().wait()
        with contextlib.suppress(asyncio.CancelledError):  # swallowed
            await asyncio.Event().wait()
        raise ConnectionError("closed while it was being stopped")

    state = ServiceState("swallows")
    task = asyncio.create_task(supervise(swallows, state, backoff=QUICK))
    await wait_for(lambda: _true(len(starts) == 1), what="the service to start")
    await asyncio.sleep(0)
    task.cancel()
    try:
        done, _ = await asyncio.wait([task], timeout=10)
        assert done and task.cancelled()  # stopped at once, not after another cancellation
        assert (starts, state.state) == ([1], STOPPED)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def _true(value: bool) -> bool:
    return value


@pytest.fixture
async def host(settings: Any, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[RunHost]:
    """A run host of this test's own with its health record every 0.1 s (no live stream:
    it is not what these tests are about)."""
    settings.AGENTDASH = {**settings.AGENTDASH, "HEALTH_INTERVAL_S": 0.1}

    async def nothing() -> None:
        return None

    monkeypatch.setattr(streaming, "start", lambda: None)
    monkeypatch.setattr(streaming, "stop", nothing)
    found = RunHost()
    found.service_register("agentdash.health", health_record_forever, runs_only=False)
    yield found
    await found.astop()


def health_command(*args: str) -> tuple[str, str, int]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("health", *args, stdout=out, stderr=err)
    except CommandError as exc:
        return out.getvalue(), err.getvalue(), exc.returncode
    return out.getvalue(), err.getvalue(), 0


async def test_a_failed_service_is_restarted_and_the_health_record_shows_it(
    host: RunHost, operator_user: User, alice: User
) -> None:
    failures = {"left": 1}

    async def listener_like(h: RunHost) -> None:
        if failures["left"]:
            failures["left"] -= 1
            raise RuntimeError("You can only call group_add() on channels that exist")
        await asyncio.Event().wait()

    host.service_register("test.flaky", listener_like, runs_only=False, backoff=QUICK)
    await host.astart(runs=False)

    def restarted() -> dict[str, Any] | None:
        rows = [p for p in processes_health() if p.name == host.worker_name]
        if not rows:
            return None
        service = rows[0].services.get("test.flaky", {})
        return service if service.get("restarts") == 1 and service["state"] == RUNNING else None

    flaky = await wait_for(sync_to_async(restarted), what="the restart to be recorded")
    assert flaky["last_error"].startswith("RuntimeError: You can only call group_add()")

    out, err, code = await sync_to_async(health_command)()
    assert code == 0, err
    assert "database: ok" in out and "channel layer: ok" in out
    assert f"{host.worker_name} web live" in out
    line = next(x for x in out.splitlines() if "test.flaky" in x)
    assert "running since" in line and "1 restarts" in line and "last stop: RuntimeError" in line

    client = AsyncClient()
    response = await client.get("/health/")
    assert (response.status_code, response["Cache-Control"]) == (200, "no-store")
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "channel_layer": "ok"}}
    await client.aforce_login(alice)  # a user: no details either
    assert "processes" not in (await client.get("/health/")).json()
    await client.aforce_login(operator_user)
    seen = (await client.get("/health/")).json()
    (me,) = [p for p in seen["processes"] if p["name"] == host.worker_name]
    assert me["live"] and not me["runs_agents"]
    assert me["services"]["test.flaky"]["restarts"] == 1 and seen["problems"] == []


async def test_a_service_that_stays_down_fails_the_health_command(host: RunHost) -> None:
    async def broken(h: RunHost) -> None:
        raise ConnectionRefusedError("Redis is down")

    host.service_register(
        "test.broken", broken, runs_only=False, backoff=Backoff(first=30.0, most=30.0)
    )
    await host.astart(runs=False)

    def recorded_down() -> bool:
        rows = [p for p in processes_health() if p.name == host.worker_name]
        return bool(rows) and rows[0].services["test.broken"]["state"] == RESTARTING

    await wait_for(sync_to_async(recorded_down), what="the service to be recorded down")
    out, err, code = await sync_to_async(health_command)()
    assert code == 1
    assert f"problem: {host.worker_name}: test.broken is restarting (ConnectionRefusedError" in err
    out, _, code = await sync_to_async(health_command)("--json")
    assert code == 1 and json.loads(out)["problems"]

    await host.astop()  # a clean stop is recorded: the process is no longer live
    (row,) = [p for p in await sync_to_async(processes_health)() if p.name == host.worker_name]
    assert row.stopped_at is not None and not row.live
    assert {s["state"] for s in row.services.values()} == {STOPPED}
    _, err, code = await sync_to_async(health_command)()
    assert code == 0, err


async def test_daphne_with_the_celery_executor_reaps_but_does_not_listen(
    settings: Any,
    recorder: Any,
    make_run: Callable[..., Any],
) -> None:
    """No worker left: daphne's own reaper hands a queued run whose message was lost to the
    broker again (here: this process's recording executor), for whichever worker comes."""
    from agentdash.runs.executors import CeleryExecutor
    from agentdash.runs.host import run_host

    settings.AGENTDASH = {
        **settings.AGENTDASH,
        "EXECUTOR": "celery",
        "REAPER_INTERVAL_S": 0.1,
        "RUN_REQUEUE_AFTER_S": 0.5,
        "HEALTH_INTERVAL_S": 0.1,
    }
    run = await sync_to_async(make_run)()
    await CeleryExecutor().astart()
    try:
        host = run_host()
        assert set(host.service_states()) == {
            "agentdash.reaper",
            "agentdash.health",
            "agentdash.alerts",
        }
        assert not host.runs_agents
        await wait_for(lambda: _true(run.pk in recorder.submitted), what="the resubmission")
        out, err, code = await sync_to_async(health_command)()
        assert code == 1  # no live worker executes runs
        assert "no live worker executes runs" in err and f"{host.worker_name} web live" in out
    finally:
        await run_host().astop()
        live_pipeline().uninstall()
