"""A burst against PostgreSQL with the documented settings (the connection pool,
``DATABASE_POOL_MAX_SIZE``): a daphne answers 400 requests, 40 at a time — pages of a
signed-in user and OTLP exports — with no 503 and no 500, while PostgreSQL never sees more of
its connections than the pool holds. (With a connection kept per thread, as
``DATABASE_CONN_MAX_AGE=60`` did, such a burst took 86–90 of PostgreSQL's 100 and 6–41 of
400 requests got 503.)

Without PostgreSQL a developer's run skips; in CI (``CI`` set) it fails instead.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest

from tests.agentdash.ingest.otlp_bodies import request_of, span
from tests.agentdash.live_harness import ROOT, Browserless, Processes, base_env, manage
from tests.agentdash.test_postgres_outage import Cluster, cluster, fetch, otlp_post

__all__ = ["cluster"]  # the fixture, imported to be used here

pytestmark = [pytest.mark.slow, pytest.mark.own_servers]

POOL = 10
REQUESTS = 400
AT_ONCE = 40


COUNT_CONNECTIONS = (
    "select count(*) from pg_stat_activity"
    " where datname = current_database() and backend_type = 'client backend'"
)


def connections(watcher: psycopg.Connection[tuple[int]]) -> int:
    """PostgreSQL's client connections to the project's database now, but the watcher's."""
    found = watcher.execute(COUNT_CONNECTIONS).fetchone()
    assert found is not None
    return int(found[0]) - 1


def test_a_burst_queues_for_the_pool_instead_of_failing(cluster: Cluster, tmp_path: Path) -> None:
    # A wait for the pool as long as the burst may take on a loaded machine: what is tested is
    # that the burst queues for the pool (and never takes more), not how fast it drains.
    env = base_env(DATABASE_URL=cluster.url, AGENTDASH_VAR_DIR=str(tmp_path / "var"),
                   DATABASE_POOL_MAX_SIZE=str(POOL), DATABASE_POOL_TIMEOUT="300",
                   AGENTDASH_INGEST_RATE_PER_S="0")  # fmt: skip
    manage(env, "migrate", "--noinput")
    manage(env, "seed_demo")
    servers = Processes(tmp_path)
    try:
        url = servers.daphne("daphne", env)
        alice = Browserless(url)
        alice.log_in("alice")
        made = subprocess.run(
            [sys.executable, "manage.py", "ingest_key", "create", "--owner", "alice",
             "--project", "burst"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
        key = made.stdout.strip()
        peak = {"connections": 0}
        done = threading.Event()

        def watch() -> None:  # one connection of its own, asked every 50 ms
            with psycopg.connect(cluster.url, autocommit=True) as watcher:
                while not done.is_set():
                    peak["connections"] = max(peak["connections"], connections(watcher))
                    time.sleep(0.05)

        def one(i: int) -> int:
            if i % 2:
                return fetch(alice, "/").status
            trace = f"{i + 1:032x}"
            body = request_of(
                span(trace, f"{i + 1:016x}", "burst", gen_ai__conversation__id=f"c{i % 7}")
            ).SerializeToString()
            return otlp_post(url, key, body).status

        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            with ThreadPoolExecutor(AT_ONCE) as pool:
                statuses = Counter(pool.map(one, range(REQUESTS)))
        finally:
            done.set()
            watcher.join()
    finally:
        servers.stop()
    assert statuses == Counter({200: REQUESTS}), statuses
    assert 0 < peak["connections"] <= POOL, peak
