"""Redis servers for tests, started by the project's own ``scripts/redis.sh``.

- :func:`shared_redis` — the project's server (port 63799), which other tests and other
  work trees may be using at the same time: never stop it, and keep to a database and names
  of your own.
- :class:`OwnRedis` — a private server on a free port with its directory in the test's
  ``tmp_path`` (``AGENTDASH_REDIS_PORT``/``AGENTDASH_REDIS_DIR``): for tests that stop and
  start Redis.

Without Redis a developer's run skips these tests; in CI (``CI`` set) they fail instead.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.agentdash.live_harness import free_port, in_ci, script


def _script(command: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return script("redis", command, env)


def unavailable(why: str) -> None:
    if in_ci():
        pytest.fail(f"{why} (CI needs this test)")
    pytest.skip(why)


def shared_redis(db: int) -> str:
    """The URL of database ``db`` of the project's Redis, started if need be (and left
    running, as ``make test`` leaves PostgreSQL)."""
    started = _script("start")
    if started.returncode != 0:
        unavailable(f"Redis could not be started: {started.stderr.strip()[-500:]}")
    return f"{started.stdout.strip().rsplit('/', 1)[0]}/{db}"


def use_redis_layer(settings: Any, url: str) -> None:
    """The scale mode's channel layer on ``url`` for this test, with names of its own (Redis
    pub/sub channels are shared by every database of a server)."""
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [{"address": url}], "prefix": f"test{uuid.uuid4().hex[:8]}"},
        }
    }


class OwnRedis:
    """A Redis of this test's own, started and stopped by ``scripts/redis.sh`` as the scale
    mode's would be (persistence included)."""

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.env = {
            **os.environ,
            "AGENTDASH_REDIS_PORT": str(self.port),
            "AGENTDASH_REDIS_DIR": str(directory),
        }
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> str:
        done = _script("start", self.env)
        if done.returncode != 0:
            unavailable(f"Redis could not be started: {done.stderr.strip()[-500:]}")
        return self.url

    def stop(self) -> None:
        done = _script("stop", self.env)
        assert done.returncode == 0, done.stderr
