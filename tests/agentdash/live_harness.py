"""Real servers and real clients for the live pipeline: daphne and Celery worker processes,
a logged-in HTTP client (the login form, with its CSRF token) and a websocket client (the
``websockets`` package) speaking docs/PROTOCOL.md. Used by tests/agentdash/test_scale_mode.py
and by bench/live.py.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import fcntl
import hashlib
import http.cookiejar
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "live-harness-password-1"
START_TIMEOUT_S = 90.0


def in_ci() -> bool:
    """Whether this run is CI's (``CI`` set, and not 0/false/no): a test that cannot have
    what it needs fails there instead of skipping."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def script(
    name: str, command: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``scripts/<name>.sh <command>`` in the repository (this process's environment, or
    ``env``)."""
    path = str(ROOT / "scripts" / f"{name}.sh")
    return subprocess.run(
        [path, command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
        check=False,
    )  # fmt: skip


def celery_worker_args(node: str, concurrency: int = 4) -> list[str]:
    """The command of a Celery worker process as the tests start it (``make worker``'s, on
    a node name of its own)."""
    return [
        sys.executable, "-m", "celery", "-A", "agentdash.celery_app", "worker",
        "--pool", "threads", "--concurrency", str(concurrency), "--loglevel", "INFO",
        "-n", f"{node}-{os.getpid()}@%h", "--without-gossip", "--without-mingle",
    ]  # fmt: skip


def base_env(**extra: str) -> dict[str, str]:
    """The server processes' environment: no model keys (the offline model), DEBUG on, the
    demo password, passwords hashed for tests (one round, not PBKDF2's million: a login
    costs a server microseconds, not ~0.4 s of CPU), plus ``extra``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "DJANGO_SETTINGS_MODULE")
    }
    env.update(
        AGENTDASH_DEMO_PASSWORD=PASSWORD,
        AGENTDASH_TEST_FAST_PASSWORDS="1",
        DEBUG="1",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        DJANGO_SETTINGS_MODULE="agentdash.settings",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def embedded_env(tmp: Path, **extra: str) -> dict[str, str]:
    """:func:`base_env` for a server on the embedded default in ``tmp``: its SQLite file and
    var/ there, the inline executor, no Redis, plus ``extra``. The servers of one environment
    share a database template (:func:`sqlite_prepared`): ask for anything else in ``extra``
    only where the test needs it."""
    env = base_env(
        DATABASE_URL=f"sqlite:///{tmp / 'agentdash.sqlite3'}",
        AGENTDASH_VAR_DIR=str(tmp / "var"),
        AGENTDASH_EXECUTOR="inline",
    )
    env.pop("REDIS_URL", None)
    env.update(extra)
    return env


def manage(env: dict[str, str], *args: str) -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")


# Migrated (and seeded) SQLite files, made once per test run and copied for every server that
# wants one: `migrate` and `seed_demo` cost a server ~10 s of start-up otherwise. A run's
# processes (pytest-xdist's workers) share them through TEMPLATES_DIR_VAR, a directory the
# run's first process makes (tests/conftest.py) and removes at its end; where it is not set
# (a benchmark, a Python of its own), a process keeps its own in a directory of its own.
TEMPLATES_DIR_VAR = "AGENTDASH_TEST_TEMPLATES"
_TEMPLATES: dict[tuple[bool, tuple[tuple[str, str], ...]], Path] = {}
_TEMPLATES_LOCK = threading.Lock()
# Differ from server to server, or name the run's template directory (the same everywhere).
# The gRPC address is a free port of each server's own: no management command serves it, so
# a template does not depend on it (with it, every ingest server migrated and seeded anew).
_PER_SERVER = ("DATABASE_URL", "AGENTDASH_VAR_DIR", "AGENTDASH_OTLP_GRPC", TEMPLATES_DIR_VAR)
# What a server does once it runs, never read by migrate or seed_demo: servers that differ only
# in these share their templates (each template is a migrate, or a seed, of a loaded CI's
# ~5–8 s of CPU).
_SERVING_ONLY = ("AGENTDASH_TEST_FLUSH_DELAY_S", "AGENTDASH_INGEST_DECODE_PROCESSES")
# Read by seed_demo, not by migrate: the migrated template under a seeded one ignores it.
_SEED_ONLY = ("AGENTDASH_DEMO_PASSWORD",)


def _template_key(env: dict[str, str], seed: bool) -> tuple[bool, tuple[tuple[str, str], ...]]:
    """What a template is made of: the environment but the per-server paths and pytest's own
    variables (``PYTEST_CURRENT_TEST`` names the running test: with it, every test that
    starts a server made a template of its own, migrating and seeding again), and but what
    neither migrate nor (for a migrated one) seed_demo reads."""
    left_out = {*_PER_SERVER, *_SERVING_ONLY, *(() if seed else _SEED_ONLY)}
    kept = (
        (name, value)
        for name, value in env.items()
        if name not in left_out and not name.startswith("PYTEST_")
    )
    return seed, tuple(sorted(kept))


def _templates_dir() -> Path:
    shared = os.environ.get(TEMPLATES_DIR_VAR)
    if shared:
        return Path(shared)
    own = Path(tempfile.mkdtemp(prefix="agentdash-templates-"))
    atexit.register(shutil.rmtree, own, ignore_errors=True)
    os.environ[TEMPLATES_DIR_VAR] = str(own)  # this process's later templates go there too
    return own


def _template(env: dict[str, str], seed: bool) -> Path:
    """The template of ``env`` (:func:`_template_key`), made on first use in the run: migrated,
    and then seeded when ``seed`` (a copy of the migrated one, seeded: one migrate an
    environment). Another process making the same one meanwhile is waited for (a file lock)."""
    key = _template_key(env, seed)
    template = _TEMPLATES.get(key)
    if template is not None:
        return template
    root = _templates_dir()
    name = hashlib.sha256(repr(key).encode()).hexdigest()[:20]
    template = root / f"{name}.sqlite3"
    with (root / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not template.exists():
            made = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=root))
            there = {**env, "DATABASE_URL": f"sqlite:///{made / 'db.sqlite3'}"}
            there["AGENTDASH_VAR_DIR"] = str(made)
            if seed:
                _copy(_template(env, False), made / "db.sqlite3")
                manage(there, "seed_demo")
            else:
                manage(there, "migrate", "--noinput")
            _copy(made / "db.sqlite3", made / "done.sqlite3")  # one file, whatever WAL holds
            os.replace(made / "done.sqlite3", template)
            shutil.rmtree(made, ignore_errors=True)
    _TEMPLATES[key] = template
    return template


def _copy(source: Path, target: Path) -> None:
    """SQLite's backup, not a file copy: the source may be in WAL mode, with pages in its -wal."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(source)) as there, closing(sqlite3.connect(target)) as copy:
        there.backup(copy)


def sqlite_prepared(env: dict[str, str], *, seed: bool = True) -> None:
    """Make the SQLite file of ``env``'s ``DATABASE_URL`` a migrated database (and seeded with
    ``seed_demo`` unless ``seed`` is false), as ``manage.py`` in ``env`` would leave it: the
    first call for an environment (:func:`_template_key`) runs them on a template, every call
    copies the template."""
    with _TEMPLATES_LOCK:
        template = _template(env, seed)
    _copy(template, Path(env["DATABASE_URL"].removeprefix("sqlite:///")))


def answering(proc: subprocess.Popen[bytes], url: str, name: str, logs: Callable[[], str]) -> None:
    """Wait until server ``proc`` answers ``url`` with 200 (``RuntimeError`` with ``logs()``
    when it exits or does not answer in ``START_TIMEOUT_S``)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited with {proc.returncode}\n{logs()}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)  # the next try of a bounded wait
    raise RuntimeError(f"{name} did not answer in {START_TIMEOUT_S:.0f} s\n{logs()}")


@dataclass
class Processes:
    """Server processes started here, each logging to a file in ``tmp``."""

    tmp: Path
    procs: list[tuple[str, subprocess.Popen[bytes]]] = field(default_factory=list)

    def spawn(self, name: str, args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
        with (self.tmp / f"{name}.log").open("wb") as out:
            proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        self.procs.append((name, proc))
        return proc

    def daphne(self, name: str, env: dict[str, str], port: int | None = None) -> str:
        """Start daphne on ``port`` (a free one unless given); its base URL once it answers."""
        port = port or free_port()
        args = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port)]
        proc = self.spawn(name, [*args, "agentdash.asgi:application"], env)
        url = f"http://127.0.0.1:{port}"
        answering(proc, f"{url}/login/", name, self.logs)
        return url

    def worker(self, name: str, env: dict[str, str], concurrency: int = 4) -> None:
        self.spawn(name, celery_worker_args(name, concurrency), env)

    def logs(self, chars: int = 4000) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text(errors='replace')[-chars:]}"
            for path in sorted(self.tmp.glob("*.log"))
        )

    def stop(self) -> None:
        for _, proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for _, proc in self.procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(20)


# ── HTTP ───────────────────────────────────────────────────────────────────────────────────
class Browserless:
    """A logged-in user over plain HTTP: cookies kept, CSRF token taken from the forms."""

    CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')

    def __init__(self, url: str) -> None:
        self.url = url
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def _csrf(self, path: str) -> str:
        with self.opener.open(f"{self.url}{path}", timeout=30) as response:
            found = self.CSRF.search(response.read().decode())
        assert found, f"no CSRF token on {path}"
        return found.group(1)

    def post(self, path: str, form_path: str, data: dict[str, str]) -> str:
        """POST ``data`` with the CSRF token of the form on ``form_path``; the final URL's
        path (after redirects)."""
        body = urllib.parse.urlencode({**data, "csrfmiddlewaretoken": self._csrf(form_path)})
        request = urllib.request.Request(
            f"{self.url}{path}", data=body.encode(), headers={"Referer": f"{self.url}{form_path}"}
        )
        with self.opener.open(request, timeout=30) as response:
            return str(urllib.parse.urlsplit(response.geturl()).path)

    def log_in(self, username: str, password: str = PASSWORD) -> None:
        landed = self.post("/login/", "/login/", {"username": username, "password": password})
        assert landed == "/", f"login as {username} failed (landed on {landed})"

    def new_chat(self, agent: str, text: str = "Hello", *, settled: bool = True) -> str:
        """A new session of ``agent``, started as the new-chat page starts one: by its first
        message, ``text``. Its run is waited for (:meth:`runs_settled`), so the session is
        idle when its id is returned — unless not ``settled``."""
        path = self.post("/sessions/", f"/chat/?agent={agent}", {"agent": agent, "text": text})
        found = re.fullmatch(r"/sessions/([^/]+)/", path)
        assert found, path
        if settled:
            self.runs_settled(found.group(1))
        return found.group(1)

    def snapshot(self, session_id: str) -> dict[str, Any]:
        """The session page's snapshot (docs/PROTOCOL.md, "Pages over HTTP")."""
        with self.opener.open(f"{self.url}/sessions/{session_id}/snapshot/", timeout=30) as got:
            found: dict[str, Any] = json.loads(got.read())
        return found

    def runs_settled(self, session_id: str, timeout: float = 300.0) -> int:
        """Wait until no run of the session is queued or running; the session's last seq
        then (a socket that says hello with it gets only what comes after)."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.snapshot(session_id)
            if all(run["status"] not in ("queued", "running") for run in found["runs"]):
                return int(found["seq"])
            assert time.monotonic() < deadline, f"runs of {session_id} still going: {found}"
            time.sleep(0.2)

    def cookie_header(self) -> str:
        return "; ".join(f"{c.name}={c.value}" for c in self.jar)


# ── Websocket ──────────────────────────────────────────────────────────────────────────────
@dataclass
class Received:
    at_ns: int
    message: dict[str, Any]


class LiveClient:
    """One websocket on a session: every message received is kept with its receive time
    (``time.time_ns()``, the clock the servers' spans use)."""

    def __init__(self, http: Browserless, session_id: str) -> None:
        self.http, self.session_id = http, session_id
        self.received: list[Received] = []
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._arrived = asyncio.Event()

    async def open(self) -> None:
        ws_url = self.http.url.replace("http://", "ws://", 1)
        self._ws = await connect(
            f"{ws_url}/ws/sessions/{self.session_id}/",
            origin=self.http.url,  # type: ignore[arg-type]
            additional_headers={"Cookie": self.http.cookie_header()},
            max_size=2**22,
            open_timeout=30,
        )
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self._ws is not None
        async for raw in self._ws:
            at = time.time_ns()
            self.received.append(Received(at, json.loads(raw)))
            self._arrived.set()

    async def send(self, message: dict[str, Any]) -> None:
        assert self._ws is not None
        await self._ws.send(json.dumps(message))

    async def wait_for(
        self, check: Callable[[list[Received]], Any], what: str, timeout: float = 180.0
    ) -> Any:
        """Wait until ``check(received)`` is truthy; returns it."""
        deadline = time.monotonic() + timeout
        while True:
            self._arrived.clear()
            found = check(self.received)
            if found:
                return found
            if self._reader is not None and self._reader.done():
                self._reader.result()
                raise AssertionError(f"the socket closed while waiting for {what}")
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"gave up waiting for {what}; got {self.types()}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), min(left, 1.0))

    async def message(self, type_: str, what: str = "", **match: Any) -> dict[str, Any]:
        def check(received: list[Received]) -> dict[str, Any] | None:
            for r in received:
                m = r.message
                if m.get("type") == type_ and all(m.get(k) == v for k, v in match.items()):
                    return m
            return None

        found: dict[str, Any] = await self.wait_for(check, what or type_)
        return found

    async def hello(self, after_seq: int = 0) -> None:
        await self.send({"type": "hello", "after_seq": after_seq})
        await self.message("replay.done")

    def items(self, kind: str | None = None) -> list[tuple[int, dict[str, Any]]]:
        """Every change item received, with its receive time, in order."""
        return [
            (r.at_ns, item)
            for r in self.received
            if r.message.get("type") == "changes"
            for item in r.message["items"]
            if kind is None or item["kind"] == kind
        ]

    def run_status(self, run_id: int) -> str | None:
        found = None
        for _, item in self.items("run"):
            if item["data"] and item["data"]["id"] == run_id:
                found = item["data"]["status"]
        return found

    async def run_ended(self, run_id: int, timeout: float = 180.0) -> str:
        ended = ("succeeded", "failed", "cancelled")
        status: str = await self.wait_for(
            lambda _: (s := self.run_status(run_id)) in ended and s,
            f"run {run_id} to end",
            timeout,
        )
        return status

    def types(self) -> list[str]:
        return [str(r.message.get("type")) for r in self.received]

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
