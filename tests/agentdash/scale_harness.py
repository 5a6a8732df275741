"""The scale mode's parts for the tests that start them: PostgreSQL and Redis by the project's
scripts (a fresh database of the test's own), the servers' environment migrated and seeded,
"hosts" — each a process group of its own, killed whole —, and the load balancer
(``scripts/haproxy.sh``, the configuration of docs/DEPLOY.md).

Without PostgreSQL, Redis or HAProxy a developer's run skips; in CI (``CI`` set) it fails.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.agentdash.live_harness import (
    ROOT,
    answering,
    base_env,
    celery_worker_args,
    free_port,
    in_ci,
    manage,
    script,
)


def unavailable(why: str) -> None:
    if in_ci():
        pytest.fail(f"{why} (CI needs the scale-mode tests)")
    pytest.skip(why)


@contextmanager
def scale_backends() -> Iterator[tuple[str, str]]:
    """(PostgreSQL URL of a fresh database of the caller's, Redis URL of a database of its
    own) — the servers started by the project's scripts; the database dropped after."""
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
    redis_url = redis.stdout.strip().rsplit("/", 1)[0] + "/14"  # a database for these tests
    try:
        yield f"{server_url.rsplit('/', 1)[0]}/{name}", redis_url
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def scale_env(backends: tuple[str, str], var: Path, **extra: str) -> dict[str, str]:
    """The servers' environment on ``backends`` (a Celery queue of its own), migrated and
    seeded."""
    database_url, redis_url = backends
    env = base_env(
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        AGENTDASH_EXECUTOR="celery",
        CELERY_QUEUE=f"agentdash-scale-{os.getpid()}-{uuid.uuid4().hex[:8]}",
        AGENTDASH_VAR_DIR=str(var),
        **extra,
    )
    manage(env, "migrate", "--noinput")
    manage(env, "seed_demo")
    return env


@dataclass
class Host:
    """A "host": one server process started in a process group of its own (a new session),
    so that killing the host kills everything it started."""

    name: str
    proc: subprocess.Popen[bytes]
    address: str = ""  # a daphne's host:port

    def kill(self) -> None:
        """SIGKILL the whole group — a machine that vanished — and reap it."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()


@dataclass
class Hosts:
    """The hosts a test started, each logging to ``<name>.log`` in ``tmp``."""

    tmp: Path
    env: dict[str, str]
    started: list[Host] = field(default_factory=list)

    def _spawn(self, name: str, args: list[str]) -> Host:
        with (self.tmp / f"{name}.log").open("ab") as out:
            proc = subprocess.Popen(
                args, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        host = Host(name, proc)
        self.started.append(host)
        return host

    def daphne(self, name: str, port: int | None = None) -> Host:
        """A daphne host on ``port`` (a free one unless given), once it answers."""
        port = port or free_port()
        args = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port)]
        host = self._spawn(name, [*args, "agentdash.asgi:application"])
        host.address = f"127.0.0.1:{port}"
        answering(host.proc, f"http://{host.address}/health/", name, self.logs)
        return host

    def worker(self, name: str, concurrency: int = 1) -> Host:
        return self._spawn(name, celery_worker_args(name, concurrency))

    def logs(self, chars: int = 3000) -> str:
        """Each host's log's end, without the balancer's health checks."""
        found = []
        for path in sorted(self.tmp.glob("*.log")):
            lines = path.read_text(errors="replace").splitlines()
            said = "\n".join(line for line in lines if '"GET /health/"' not in line)
            found.append(f"--- {path.name}\n{said[-chars:]}")
        return "\n".join(found)

    def stop(self) -> None:
        for host in self.started:
            host.stop()


@dataclass
class Balancer:
    """HAProxy in front of daphnes, started by ``scripts/haproxy.sh`` (DEPLOY.md's
    configuration) in ``directory``."""

    directory: Path
    port: int
    url: str = ""

    def _env(self, **extra: str) -> dict[str, str]:
        return {
            **os.environ,
            "AGENTDASH_LB_DIR": str(self.directory),
            "AGENTDASH_LB_PORT": str(self.port),
            **extra,
        }

    def start(self, daphnes: list[Host]) -> str:
        servers = " ".join(d.address for d in daphnes)
        started = script("haproxy", "start", self._env(AGENTDASH_LB_SERVERS=servers))
        if started.returncode != 0:
            unavailable(f"HAProxy could not be started: {started.stderr.strip()[-800:]}")
        self.url = started.stdout.strip()
        return self.url

    def admin(self, command: str) -> str:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(str(self.directory / "admin.sock"))
            sock.sendall(command.encode() + b"\n")
            out = b""
            while chunk := sock.recv(65536):
                out += chunk
        return out.decode()

    def only(self, server: str, servers: tuple[str, ...] = ("web1", "web2")) -> None:
        """New connections to ``server`` alone: the others drained (their open connections
        stay) — as an operator takes a daphne out before restarting it."""
        for name in servers:
            state = "ready" if name == server else "drain"
            said = self.admin(f"set server daphnes/{name} state {state}")
            assert not said.strip(), said

    def up(self, server: str) -> bool:
        """Whether the balancer's health checks have ``server`` running."""
        for line in self.admin("show servers state daphnes").splitlines():
            fields = line.split()
            if len(fields) > 5 and fields[3] == server:
                return fields[5] == "2"  # srv_op_state: 2 is running
        return False

    def all_ready(self, servers: tuple[str, ...] = ("web1", "web2")) -> None:
        """Every daphne takes new connections again."""
        for name in servers:
            said = self.admin(f"set server daphnes/{name} state ready")
            assert not said.strip(), said

    def stop(self) -> None:
        script("haproxy", "stop", self._env())


def pids_entered(gate: Path, topic: str) -> set[int]:
    """The worker processes that entered the gate agent's tool for ``topic``."""
    prefix = f"entered-{topic}-"
    return {int(p.name.removeprefix(prefix)) for p in gate.glob(f"{prefix}*")}
