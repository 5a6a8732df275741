"""Celery worker processes for the tests that kill them, cut them off from Redis or leave
them idle: started as ``make worker`` starts them (the threads pool), on the test database,
running :mod:`tests.agentdash.runs.worker_agents`; and what those tests do from this process
(enqueue runs, switch the agent's callback, read what the workers stored).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import redis
from asgiref.sync import async_to_sync
from django.db import connection

from agentdash.agent_sessions.models import AgentSession
from agentdash.controls.models import CallbackSetting
from agentdash.controls.switch_broadcast import callback_change_publish
from agentdash.controls.switchboard import CallbackSettingChange
from agentdash.registry.loader import agents_cache_clear
from agentdash.runs import executors
from agentdash.runs.health import ProcessState, processes_health
from agentdash.runs.models import Run
from agentdash.runs.services import run_enqueue
from agentdash.spans.models import Span
from runtime.telemetry.attributes import AgentDash
from tests.agentdash.live_harness import ROOT, celery_worker_args
from tests.agentdash.runs.broker import celery_broker
from tests.agentdash.runs.conftest import FINISHED, says
from tests.agentdash.runs.worker_agents import AGENT_NAME, CALLBACK
from tests.waits import until

AGENT = "tests.agentdash.runs.worker_agents:root_agent"
WAIT_S = 120.0  # bounds a wait; measures nothing
SWITCH_APPLIED = "control listener: applied"  # what a worker logs for each switch message


def database_url() -> str:
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    user = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{user}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


class Workers:
    """Worker processes of one test, on one Redis and a queue of its own; each logs to a
    file in ``tmp``. ``gate``: the directory of the agent's tool gate."""

    def __init__(self, redis_url: str, tmp: Path, **settings: str) -> None:
        self.redis_url, self.tmp = redis_url, tmp
        self.queue = f"agentdash-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        # Pub/sub is shared by every database of the Redis server: the workers of tests running
        # at once (both passes of ``make test``) must not hear each other's switches.
        self.layer_prefix = f"test{uuid.uuid4().hex[:8]}"
        self.gate = tmp / "gate"
        self.gate.mkdir()
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "agentdash.settings",
            "DATABASE_URL": database_url(),
            "REDIS_URL": redis_url,
            "CELERY_BROKER_URL": redis_url,
            "CELERY_QUEUE": self.queue,
            "AGENTDASH_EXECUTOR": "celery",
            "CHANNEL_LAYER_PREFIX": self.layer_prefix,
            "AGENTDASH_AGENTS": AGENT,
            "AGENTDASH_TEST_GATE_DIR": str(self.gate),
            "PYTHONUNBUFFERED": "1",
            **settings,
        }
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, *names: str) -> None:
        for name in names:
            with (self.tmp / f"{name}.log").open("wb") as log:
                self.procs[name] = subprocess.Popen(
                    celery_worker_args(name),
                    cwd=ROOT,
                    env=self.env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )

    def name_of(self, worker_name: str) -> str:
        """Which of these processes the run worker ``worker_name`` (``host:pid``) is."""
        pid = int(worker_name.rsplit(":", 1)[1])
        return next(name for name, proc in self.procs.items() if proc.pid == pid)

    def switch_applied(self, name: str, session_id: str) -> bool:
        """Whether the worker ``name`` has applied a switch of the session ``session_id``
        (its control listener logs each switch message it applies, with the change)."""
        text = (self.tmp / f"{name}.log").read_text(errors="replace")
        marker = f"'session_id': {session_id!r}"
        return any(marker in line for line in text.splitlines() if SWITCH_APPLIED in line)

    def switch_heard(self, names: Sequence[str], session_id: str) -> float:
        """Wait until each worker of ``names`` has applied a switch of the session
        ``session_id``; how long that took, in seconds."""
        started = time.monotonic()
        self.wait(
            lambda: all(self.switch_applied(name, session_id) for name in names),
            f"workers {names} to apply the switch of session {session_id}",
        )
        return time.monotonic() - started

    def logs(self) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text(errors='replace')[-6000:]}"
            for path in sorted(self.tmp.glob("*.log"))
        )

    def wait(self, check: Callable[[], Any], what: str, timeout: float = WAIT_S) -> Any:
        return until(check, what, timeout=timeout, detail=self.logs)

    def ready(self, *names: str) -> list[ProcessState]:
        """Wait until the workers ``names`` record themselves live, executing runs, their
        control listener running; their records."""
        pids = {str(self.procs[name].pid) for name in names}

        def up() -> list[ProcessState] | None:
            found = [
                p
                for p in processes_health()
                if p.name.rsplit(":", 1)[1] in pids
                and p.live
                and p.runs_agents
                and p.services.get("agentdash.control-listener", {}).get("state") == "running"
            ]
            return found if len(found) == len(pids) else None

        ready: list[ProcessState] = self.wait(up, f"workers {names} to be ready")
        return ready

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(30)
        redis.Redis.from_url(self.redis_url).delete(self.queue)


@contextmanager
def submitting_to(workers: Workers, settings: Any) -> Iterator[None]:
    """This process enqueues runs of the test agent through the workers' broker and queue,
    and publishes switches on their channel layer."""
    settings.AGENTDASH = {**settings.AGENTDASH, "EXECUTOR": "celery", "AGENTS": [AGENT]}
    settings.CELERY_TASK_DEFAULT_QUEUE = workers.queue
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [{"address": workers.redis_url}], "prefix": workers.layer_prefix},
        }
    }
    agents_cache_clear()
    executors.executor_reset()
    try:
        with celery_broker(workers.redis_url):
            yield
    finally:
        executors.executor_reset()
        agents_cache_clear()


def new_session() -> AgentSession:
    return AgentSession.objects.create(
        id=uuid.uuid4().hex, app_name=AGENT_NAME, user_id="u", last_update_time=time.time()
    )


def enqueue(session: AgentSession, text: str = "Please look up the topic tea") -> Run:
    return run_enqueue(
        session=session, agent_name=AGENT_NAME, message=says(text), requested_by=None
    )


def switch_off(session: AgentSession) -> None:
    """An operator's toggle: ``note_checked`` off for ``session``, stored, then published."""
    setting = CallbackSetting.objects.create(
        agent_name=AGENT_NAME, callback_name=CALLBACK, session=session, enabled=False
    )
    async_to_sync(callback_change_publish)(CallbackSettingChange.for_setting(setting))


def ended(run: Run, workers: Workers) -> Run:
    def done() -> Run | None:
        found = Run.objects.get(pk=run.pk)
        return found if found.status in FINISHED else None

    finished: Run = workers.wait(done, f"run {run.pk} to end")
    return finished


def callback_outcomes(run: Run) -> list[tuple[str, str]]:
    """(trace id, outcome) of every ended ``note_checked`` span of ``run``'s session."""
    spans = Span.objects.filter(
        session_id=run.session_id, name=f"callback {CALLBACK}", end_time__isnull=False
    ).order_by("start_time")
    return [(s.trace_id, str(s.attributes.get(AgentDash.CALLBACK_OUTCOME))) for s in spans]
