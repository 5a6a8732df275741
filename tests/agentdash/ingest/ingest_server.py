"""The OTLP ingest tests' real server: daphne on the embedded default (an SQLite file, the
inline executor, the in-memory layer) in a temporary directory, migrated and seeded; keys
made with ``manage.py ingest_key``; the owner's view of her external sessions."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.agentdash.live_harness import (
    ROOT,
    Browserless,
    LiveClient,
    Processes,
    embedded_env,
    free_port,
    sqlite_prepared,
)


@contextmanager
def embedded_server(tmp_path: Path, **extra: str) -> Iterator[tuple[str, dict[str, str]]]:
    """(daphne's base URL, its environment, with ``extra``), OTLP/gRPC served too, at the
    address its environment's ``AGENTDASH_OTLP_GRPC`` names."""
    with restartable_server(tmp_path, **extra) as server:
        yield server.url, server.env


@dataclass
class Dashboard:
    """A running embedded server that a test may kill and start again (same port, same
    database): what an app that runs elsewhere sees of an AgentDash restart."""

    procs: Processes
    env: dict[str, str]
    url: str = ""
    runs: int = 0

    def start(self) -> None:
        port = int(self.url.rsplit(":", 1)[1]) if self.url else None
        self.runs += 1
        self.url = self.procs.daphne(f"daphne-{self.runs}", self.env, port=port)

    def kill(self) -> None:
        """SIGKILL: nothing of it is left to answer or to finish."""
        for _, proc in self.procs.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(20)


@contextmanager
def restartable_server(tmp_path: Path, **extra: str) -> Iterator[Dashboard]:
    env = embedded_env(tmp_path, **extra)
    env["AGENTDASH_OTLP_GRPC"] = f"127.0.0.1:{free_port()}"
    sqlite_prepared(env)  # migrated and seeded, copied from the run's template
    server = Dashboard(Processes(tmp_path), env)
    try:
        server.start()
        yield server
    finally:
        server.procs.stop()


def key_create(env: dict[str, str], owner: str, project: str) -> str:
    made = subprocess.run(
        [sys.executable, "manage.py", "ingest_key", "create", "--owner", owner,
         "--project", project],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    key = made.stdout.strip()
    assert key.startswith("agd_"), made.stdout
    return key


def external_sessions(user: Browserless) -> list[str]:
    """The ids of the OTLP sessions on ``user``'s home page, in its order, once each."""
    with user.opener.open(f"{user.url}/", timeout=30) as page:
        found = re.findall(r"/sessions/(otlp-[0-9a-f]+)/", page.read().decode())
    return list(dict.fromkeys(found))


def span_names(client: LiveClient) -> dict[str, Any]:
    """The latest version received of each span, by name."""
    return {item["data"]["name"]: item["data"] for _, item in client.items("span")}


def otlp_send(url: str, key: str, body: bytes, path: str = "/v1/traces") -> int:
    """POST ``body`` (an OTLP/protobuf export, or JSON to another ``path``) to the server at
    ``url`` with ``key``; its status, which must be 200 or 201."""
    import urllib.request

    kind = "application/x-protobuf" if path == "/v1/traces" else "application/json"
    request = urllib.request.Request(
        f"{url}{path}", data=body, headers={"Content-Type": kind, "Authorization": f"Bearer {key}"}
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        assert answer.status in (200, 201), (path, answer.status)
        return int(answer.status)
