"""A real PostgreSQL outage, as the site's visitors see it: 503 with ``Retry-After`` while
the server is stopped, then 200s again once it is back — no restart of AgentDash.

A private cluster (``scripts/postgres.sh`` with its own ``AGENTDASH_PG_DIR`` and port, never
the shared one other tests use), migrated and seeded, behind two daphne processes: one with
DEBUG on and a connection per request, one with DEBUG off and kept connections
(``DATABASE_CONN_MAX_AGE=60``, health-checked). A signed-in user and the demo operator load
pages; the server is stopped for ~10 s while they keep asking; then started again.

Without PostgreSQL a developer's run skips; in CI (``CI`` set) it fails instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
import urllib.error
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.agentdash.live_harness import (
    ROOT,
    Browserless,
    Processes,
    base_env,
    free_port,
    in_ci,
    manage,
)

pytestmark = [pytest.mark.slow]

OUTAGE_S = 10.0
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


def fetch(user: Browserless, path: str) -> Answer:
    try:
        with user.opener.open(f"{user.url}{path}", timeout=30) as response:
            body = response.read().decode()
            return Answer(response.status, response.headers.get("Retry-After"), body)
    except urllib.error.HTTPError as error:
        return Answer(error.code, error.headers.get("Retry-After"), error.read().decode())


def test_pages_answer_503_during_an_outage_and_200_after_it(
    cluster: Cluster, tmp_path: Path
) -> None:
    env = base_env(DATABASE_URL=cluster.url, AGENTDASH_VAR_DIR=str(tmp_path / "var"))
    manage(env, "migrate", "--noinput")
    manage(env, "seed_demo")
    servers = Processes(tmp_path)
    try:
        debug_on = servers.daphne("debug-on", {**env, "DATABASE_CONN_MAX_AGE": "0"})
        debug_off = servers.daphne(
            "debug-off",
            {**env, "DEBUG": "0", "SECRET_KEY": "x" * 60, "DATABASE_CONN_MAX_AGE": "60"},
        )
        users = []
        for url in (debug_on, debug_off):
            for name in ("alice", "operator"):
                user = Browserless(url)
                user.log_in(name)
                users.append(user)
        for user in users:
            for path in PAGES[:1]:
                assert fetch(user, path).status == 200

        stopped = cluster.run("stop")
        assert stopped.returncode == 0, stopped.stderr
        down_at = time.monotonic()
        during: list[tuple[str, str, int]] = []
        while time.monotonic() - down_at < OUTAGE_S:
            for user in users:
                for path in PAGES:
                    answer = fetch(user, path)
                    during.append((user.url, path, answer.status))
                    if path.startswith("/login/") and answer.status == 200:
                        continue  # the login form needs no database
                    assert answer.status == 503, (user.url, path, answer.status, answer.body[-500:])
                    assert answer.retry_after == "5"
                    assert "Briefly unavailable" in answer.body
            time.sleep(0.5)
        assert len(during) >= 4 * len(users) * len(PAGES)

        started = cluster.run("start")
        assert started.returncode == 0, started.stderr
        back_at = time.monotonic()
        for user in users:
            for path in PAGES:
                answer = fetch(user, path)
                assert answer.status == 200, (user.url, path, answer.status, answer.body[-500:])
        recovered_s = time.monotonic() - back_at
        print(f"outage {OUTAGE_S:.0f} s: {len(during)} requests, all 503 (login form 200); "
              f"every page 200 again {recovered_s:.2f} s after the server was ready")  # fmt: skip
    except BaseException:
        print(servers.logs())
        raise
    finally:
        servers.stop()
