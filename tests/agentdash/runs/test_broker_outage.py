"""A real Celery worker outlives a Redis outage (Redis is its broker and channel layer).

Redis — a server of this test's own, started by scripts/redis.sh as the project's is, so
persistence included — stops for 10 s while the worker is inside a run's tool, and a run is
queued meanwhile (its message cannot be sent). Redis comes back: the worker process is still
there (Celery 5.7.0's exited: see the pin in pyproject.toml), the first run finishes, the
run queued during the outage is submitted again by the reaper and runs, what Redis held
before it stopped is still there, and an operator's switch made afterwards reaches the
worker within 1 s.

Without Redis a developer's run skips; in CI it fails.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from agentdash.runs.models import Run
from tests.agentdash.live_harness import ROOT
from tests.agentdash.redis_servers import OwnRedis
from tests.agentdash.runs.worker_harness import (
    Workers,
    callback_outcomes,
    ended,
    enqueue,
    new_session,
    submitting_to,
    switch_off,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

OUTAGE_S = 10.0


@pytest.fixture
def workers(tmp_path: Path, settings: Any) -> Iterator[tuple[Workers, OwnRedis]]:
    server = OwnRedis(tmp_path / "redis")
    found = Workers(
        server.start(),
        tmp_path,
        AGENTDASH_RUN_REQUEUE_AFTER_S="2",  # a run whose message was lost: sent again soon
        AGENTDASH_REAPER_INTERVAL_S="0.5",
        AGENTDASH_CONTROLS_PROBE_S="0.3",
        AGENTDASH_CONTROLS_RELOAD_S="600",  # only a message, or the reload after an outage
        AGENTDASH_HEALTH_INTERVAL_S="0.5",
    )
    try:
        with submitting_to(found, settings):
            yield found, server
    finally:
        server.start()  # the workers stop cleanly with their broker there
        found.stop()
        server.stop()


def test_a_worker_outlives_a_redis_outage(workers: tuple[Workers, OwnRedis]) -> None:
    procs, server = workers
    procs.start("w1")
    procs.ready("w1")
    (procs.gate / "hold").touch()
    first = enqueue(new_session())
    pid = procs.procs["w1"].pid
    procs.wait(lambda: (procs.gate / f"entered-{pid}").exists(), "the first run's tool")
    redis.Redis.from_url(procs.redis_url).set("agentdash-test-kept", "yes")

    server.stop()
    stopped = time.monotonic()
    during = enqueue(new_session(), "Please look up the topic rain")
    time.sleep(max(0.0, OUTAGE_S - (time.monotonic() - stopped)))
    server.start()

    assert redis.Redis.from_url(procs.redis_url).get("agentdash-test-kept") == b"yes"  # AOF
    (procs.gate / "hold").unlink()
    assert ended(first, procs).status == Run.Status.SUCCEEDED, procs.logs()
    assert ended(during, procs).status == Run.Status.SUCCEEDED, procs.logs()
    assert procs.procs["w1"].poll() is None, procs.logs()

    session = new_session()
    switch_off(session)
    print(f"switch published → applied: {procs.switch_heard(['w1'], session.id):.2f} s")
    after = enqueue(session, "Please look up the topic snow")
    assert ended(after, procs).status == Run.Status.SUCCEEDED, procs.logs()
    assert {outcome for _, outcome in callback_outcomes(after)} == {"disabled"}, procs.logs()
    assert procs.procs["w1"].poll() is None, procs.logs()

    health = subprocess.run(
        [sys.executable, "manage.py", "health"],
        cwd=ROOT,
        env=procs.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert health.returncode == 0, health.stdout + health.stderr
    assert f":{pid} worker live" in health.stdout
