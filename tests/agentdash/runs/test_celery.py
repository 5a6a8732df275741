"""The celery executor for real: the project's Redis (scripts/redis.sh) and ``celery -A
agentdash.celery_app worker`` processes on the test database. A run succeeds; a worker
killed (SIGKILL) inside a tool loses no committed event, and its run is taken up again.

Without Redis a developer's run skips these tests; in CI (``CI`` set) they fail instead.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.agent_sessions.selectors import session_state_view
from agentdash.registry.loader import agents_cache_clear
from agentdash.runs import executors
from agentdash.runs.models import Run
from agentdash.runs.services import run_enqueue
from agentdash.spans.models import Span
from runtime.sessions.state import State
from tests.agentdash.live_harness import celery_worker_args, in_ci
from tests.agentdash.runs.broker import celery_broker
from tests.agentdash.runs.conftest import FINISHED, says
from tests.agentdash.runs.worker_harness import database_url
from tests.waits import until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
AGENT = "tests.agentdash.runs.celery_agents:root_agent"
WAIT_S = 180.0


def redis_script(command: str) -> subprocess.CompletedProcess[str]:
    script = str(REPO / "scripts" / "redis.sh")
    return subprocess.run([script, command], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    """The project's Redis server. Left running for the next run, as ``make test`` leaves
    PostgreSQL, except in CI when these tests started it (other test runs on a developer's
    machine may be using it meanwhile)."""
    was_running = redis_script("status").returncode == 0
    started = redis_script("start")
    if started.returncode != 0:
        why = f"Redis could not be started: {started.stderr.strip()[-500:]}"
        if in_ci():
            pytest.fail(f"{why} (CI needs the Celery tests)")
        pytest.skip(why)
    base = started.stdout.strip().rsplit("/", 1)[0]
    yield f"{base}/15"  # a database for the tests
    if in_ci() and not was_running:
        redis_script("stop")


class Workers:
    """Celery worker processes of this test; each logs to a file in ``tmp``."""

    def __init__(self, env: dict[str, str], tmp: Path) -> None:
        self.env, self.tmp = env, tmp
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self) -> subprocess.Popen[bytes]:
        n = len(self.procs) + 1
        log = open(self.tmp / f"worker-{n}.log", "wb")  # noqa: SIM115  (closed with the process)
        proc = subprocess.Popen(
            celery_worker_args(f"test{n}"),
            cwd=REPO,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        self.procs.append(proc)
        return proc

    def logs(self) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text(errors='replace')[-4000:]}"
            for path in sorted(self.tmp.glob("worker-*.log"))
        )

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(30)


@pytest.fixture
def workers(
    redis_url: str, tmp_path: Path, settings: Any, transactional_db: None
) -> Iterator[Workers]:
    import redis

    # A queue of this test's own: test runs of other work trees' (or other sessions') may
    # share the server, and a worker takes whatever is in the queues it reads.
    queue = f"agentdash-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    gate = tmp_path / "gate"
    gate.mkdir()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "agentdash.settings",
        "DATABASE_URL": database_url(),
        "REDIS_URL": redis_url,
        "CELERY_QUEUE": queue,
        "CELERY_VISIBILITY_TIMEOUT": "10",
        "AGENTDASH_EXECUTOR": "celery",
        "AGENTDASH_AGENTS": AGENT,
        "AGENTDASH_RUN_HEARTBEAT_S": "0.2",
        "AGENTDASH_RUN_STALE_AFTER_S": "3",
        "AGENTDASH_REAPER_INTERVAL_S": "0.5",
        "AGENTDASH_RUN_MAX_ATTEMPTS": "3",
        "AGENTDASH_RUN_REQUEUE_AFTER_S": "600",  # no second chance for a lost message
        "AGENTDASH_TEST_GATE_DIR": str(gate),
        "PYTHONUNBUFFERED": "1",
        # Pub/sub ignores the database number: apart from other tests' workers.
        "CHANNEL_LAYER_PREFIX": f"test{uuid.uuid4().hex[:8]}",
    }
    # This process enqueues through the same broker, on the same queue.
    settings.AGENTDASH = {**settings.AGENTDASH, "EXECUTOR": "celery", "AGENTS": [AGENT]}
    settings.CELERY_TASK_DEFAULT_QUEUE = queue
    agents_cache_clear()
    executors.executor_reset()
    found = Workers(env, tmp_path)
    found.gate = gate  # type: ignore[attr-defined]
    try:
        with celery_broker(redis_url):
            yield found
    finally:
        found.stop()
        redis.Redis.from_url(redis_url).delete(queue)
        executors.executor_reset()
        agents_cache_clear()


def wait_until(check: Callable[[], Any], what: str, workers: Workers) -> Any:
    return until(check, what, timeout=WAIT_S, detail=workers.logs)


def run_ended(run_id: int, workers: Workers) -> Run:
    def ended() -> Run | None:
        run = Run.objects.get(pk=run_id)
        return run if run.status in FINISHED else None

    found: Run = wait_until(ended, f"run {run_id} to end", workers)
    return found


def fold(session: AgentSession) -> dict[str, Any]:
    """The state the session's stored events add up to."""
    state: dict[str, Any] = {}
    for data in (
        SessionEvent.objects.filter(session=session).order_by("seq").values_list("data", flat=True)
    ):
        delta = (data.get("actions") or {}).get("state_delta") or {}
        state.update({k: v for k, v in delta.items() if not k.startswith(State.TEMP_PREFIX)})
    return state


def enqueue(text: str) -> tuple[AgentSession, Run]:
    session = AgentSession.objects.create(
        id=uuid.uuid4().hex, app_name="celery_agent", user_id="u", last_update_time=time.time()
    )
    run = run_enqueue(
        session=session, agent_name="celery_agent", message=says(text), requested_by=None
    )
    return session, run


def test_a_worker_process_runs_the_run(workers: Workers) -> None:
    proc = workers.start()
    session, run = enqueue("Please look up the topic tea")

    done = run_ended(run.pk, workers)

    assert (done.status, done.attempt, done.error) == (Run.Status.SUCCEEDED, 1, ""), workers.logs()
    assert done.worker.endswith(f":{proc.pid}") and len(done.trace_id) == 32
    authors = list(
        SessionEvent.objects.filter(session=session)
        .order_by("seq")
        .values_list("author", flat=True)
    )
    assert authors == ["user", "celery_agent", "celery_agent", "celery_agent"]
    state = session_state_view(session_id=session.id).state
    assert "tea" in state["answer"] and state == fold(session)


def test_a_killed_worker_loses_no_event_and_its_run_is_taken_up_again(workers: Workers) -> None:
    gate: Path = workers.gate  # type: ignore[attr-defined]
    (gate / "hold").touch()
    first = workers.start()
    session, run = enqueue("Please look up the topic tea")
    wait_until(lambda: (gate / f"entered-{first.pid}").exists(), "the tool to be entered", workers)

    # Inside the tool: the user's message and the model's call are committed, and the live
    # pipeline has stored the invocation's span as started.
    running = Run.objects.get(pk=run.pk)
    assert (running.status, running.attempt) == (Run.Status.RUNNING, 1)
    committed = wait_until(
        lambda: (
            list(
                SessionEvent.objects.filter(session=session)
                .order_by("seq")
                .values_list("event_id", flat=True)
            )[:2]
            or None
        ),
        "the first events",
        workers,
    )
    assert len(committed) == 2
    first_trace = wait_until(lambda: Run.objects.get(pk=run.pk).trace_id, "the trace", workers)
    wait_until(
        lambda: Span.objects.filter(trace_id=first_trace, end_time__isnull=True).exists(),
        "the open spans to be stored",
        workers,
    )

    first.send_signal(signal.SIGKILL)
    first.wait(60)
    (gate / "hold").unlink()
    workers.start()

    done = run_ended(run.pk, workers)

    # The new worker's reaper found the heartbeat stopped and queued the run again (the
    # broker would also have handed the unacknowledged message out again): attempt 2.
    assert (done.status, done.attempt) == (Run.Status.SUCCEEDED, 2), workers.logs()
    assert done.worker != running.worker and done.trace_id != first_trace
    events = list(SessionEvent.objects.filter(session=session).order_by("seq"))
    assert [e.event_id for e in events[:2]] == committed  # nothing committed was lost
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert sum(e.author == "user" for e in events) == 1  # the message was not sent twice
    interrupted = events[2].data["content"]["parts"][0]["function_response"]
    assert "interrupted" in interrupted["response"]["error"]
    assert session_state_view(session_id=session.id).state == fold(session)
    # The dead attempt's spans were closed as errored by the reaper.
    assert not Span.objects.filter(trace_id=first_trace, end_time__isnull=True).exists()
    died = Span.objects.filter(trace_id=first_trace, status_message__startswith="run's worker died")
    assert died.exists() and {s.status for s in died} == {Span.Status.ERROR}
