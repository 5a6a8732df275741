"""The servers' database templates (live_harness.sqlite_prepared): one per environment, not
one per test — the test harness's own promise, since each template costs a migrate and a
seed (seconds of CPU)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agentdash.live_harness import (
    ROOT,
    TEMPLATES_DIR_VAR,
    _template_key,
    base_env,
    embedded_env,
)


def test_a_template_is_the_environment_but_its_paths_and_the_running_test() -> None:
    one = base_env(DATABASE_URL="sqlite:////tmp/a/db.sqlite3", AGENTDASH_VAR_DIR="/tmp/a")
    other = {
        **base_env(DATABASE_URL="sqlite:////tmp/b/db.sqlite3", AGENTDASH_VAR_DIR="/tmp/b"),
        "PYTEST_CURRENT_TEST": "tests/x.py::test_other (setup)",
    }
    assert _template_key(one, True) == _template_key(other, True)
    assert _template_key(one, True) != _template_key(one, False)  # seeded or not
    agents = {**one, "AGENTDASH_AGENTS": "tests.security.xss_agent:root_agent"}
    assert _template_key(agents, True) != _template_key(one, True)  # what may seed differently


def test_servers_on_the_embedded_default_share_one_template(tmp_path: Path) -> None:
    """The modules that start a daphne of their own (ingest, hostile ASGI, daphne's limits)
    ask for the same environment, so they copy one template instead of making one each."""
    first, second = embedded_env(tmp_path / "a"), embedded_env(tmp_path / "b")
    assert first["DATABASE_URL"] != second["DATABASE_URL"]
    assert _template_key(first, True) == _template_key(second, True)
    assert "REDIS_URL" not in first and first["AGENTDASH_EXECUTOR"] == "inline"


def test_ingest_servers_share_one_template_whatever_their_grpc_port(tmp_path: Path) -> None:
    """Each ingest server serves OTLP/gRPC on a free port of its own: that address is the
    server's, not its database's (with it in the key, every ingest test migrated and seeded
    a template of its own: ~10 s of a loaded CI each)."""
    first = {**embedded_env(tmp_path / "a"), "AGENTDASH_OTLP_GRPC": "127.0.0.1:40001"}
    second = {**embedded_env(tmp_path / "b"), "AGENTDASH_OTLP_GRPC": "127.0.0.1:40002"}
    assert _template_key(first, True) == _template_key(second, True)
    assert _template_key(first, True) == _template_key(embedded_env(tmp_path / "c"), True)


def test_what_only_a_running_server_reads_makes_no_template_of_its_own(tmp_path: Path) -> None:
    """A flusher's test delay or the ingest decoding processes change nothing migrate or
    seed_demo writes; the demo password changes what is seeded, not what is migrated; the
    agents change both (migrate mirrors them in the registry)."""
    plain = embedded_env(tmp_path / "a")
    for knob in ("AGENTDASH_TEST_FLUSH_DELAY_S", "AGENTDASH_INGEST_DECODE_PROCESSES"):
        for seed in (True, False):
            assert _template_key({**plain, knob: "1"}, seed) == _template_key(plain, seed)
    password = {**plain, "AGENTDASH_DEMO_PASSWORD": "another-password-1"}
    assert _template_key(password, False) == _template_key(plain, False)
    assert _template_key(password, True) != _template_key(plain, True)
    agents = {**plain, "AGENTDASH_AGENTS": "tests.security.xss_agent:root_agent"}
    assert _template_key(agents, False) != _template_key(plain, False)


MAKE_ONE = """
import json, sqlite3, sys
from pathlib import Path
from tests.agentdash import live_harness as harness

made = []
manage = harness.manage
harness.manage = lambda env, *args: (made.append(args), manage(env, *args))
env = harness.embedded_env(Path(sys.argv[1]))
harness.sqlite_prepared(env, seed=False)
database = env["DATABASE_URL"].removeprefix("sqlite:///")
with sqlite3.connect(database) as db:
    (migrations,) = db.execute("SELECT count(*) FROM django_migrations").fetchone()
print(json.dumps({"made": made, "migrations": migrations}))
"""


@pytest.mark.slow  # one migrate, in one of two Pythons
def test_the_processes_of_a_run_make_each_template_once(tmp_path: Path) -> None:
    """pytest-xdist's workers share the run's template directory: two processes asking for
    the same template at once wait for one another, one migrates, both get the database."""
    shared = tmp_path / "templates"
    shared.mkdir()
    env = {**os.environ, TEMPLATES_DIR_VAR: str(shared)}
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", MAKE_ONE, str(tmp_path / n)], cwd=ROOT, env=env, **pipes
        )
        for n in ("one", "two")
    ]
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-3000:]
        reports.append(json.loads(out.strip().splitlines()[-1]))
    assert sorted(len(r["made"]) for r in reports) == [0, 1], reports  # one migrate in all
    assert [r["made"] for r in reports if r["made"]] == [[["migrate", "--noinput"]]]
    assert reports[0]["migrations"] == reports[1]["migrations"] > 0
    assert [p.suffix for p in shared.iterdir() if p.is_dir()] == []  # nothing half-made left
