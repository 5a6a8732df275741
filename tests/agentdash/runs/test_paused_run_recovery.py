"""A paused run outlives its processes: real Celery workers on the project's Redis, a
breakpoint before the agent's tool; the run pauses (``waiting``, no worker holds it), every
worker is SIGKILLed, a new worker starts, and the person's answer — given while no worker
was alive — resumes the run there: the tool runs with the arguments as the person edited
them. Nothing is lost and nothing runs twice.

Without Redis a developer's run skips; in CI it fails.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from agentdash.agent_sessions.selectors import event_from_row, session_events
from agentdash.controls.breakpoints import breakpoint_add
from agentdash.runs.confirmation_requests import pending_confirmations
from agentdash.runs.confirmations import confirmation_answer
from agentdash.runs.models import Run
from tests.agentdash.redis_servers import shared_redis
from tests.agentdash.runs.worker_agents import AGENT_NAME
from tests.agentdash.runs.worker_harness import Workers, ended, enqueue, new_session, submitting_to

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def workers(tmp_path: Path, settings: Any) -> Iterator[Workers]:
    found = Workers(shared_redis(db=13), tmp_path, AGENTDASH_HEALTH_INTERVAL_S="0.5")
    try:
        with submitting_to(found, settings):
            yield found
    finally:
        found.stop()


def tool_results(session_id: str) -> list[dict[str, Any]]:
    return [
        dict(response.response or {})
        for row in session_events(session_id=session_id)
        for response in event_from_row(row).get_function_responses()
        if response.name == "look_up_topic"
    ]


def test_a_paused_run_survives_every_worker_killed_and_resumes_on_the_answer(
    workers: Workers, operator_user: User
) -> None:
    workers.start("w1", "w2")
    workers.ready("w1", "w2")
    session = new_session()
    breakpoint_add(
        agent_name=AGENT_NAME,
        kind="before_tool",
        tool_name="look_up_topic",
        session_id=session.pk,
        actor=None,
    )
    run = enqueue(session, "Please look up the topic tea")

    def waiting() -> Run | None:
        found = Run.objects.get(pk=run.pk)
        return found if found.status == Run.Status.WAITING else None

    workers.wait(waiting, "the run to pause at the breakpoint")
    (request,) = pending_confirmations(session_id=session.pk)
    assert request.tool == "look_up_topic" and request.hint.startswith("Breakpoint")
    for proc in workers.procs.values():
        proc.send_signal(signal.SIGKILL)
    for proc in workers.procs.values():
        proc.wait(30)
    assert Run.objects.get(pk=run.pk).status == Run.Status.WAITING  # nothing to reap

    # Answered while no worker is alive: the answer's run waits in the queue.
    args = dict(request.args, topic="coffee")
    resumed = confirmation_answer(
        session=session,
        request_id=request.request_id,
        decision="approve",
        payload={"args": args},
        actor=operator_user,
    )
    workers.start("w3")
    done = ended(resumed, workers)
    assert done.status == Run.Status.SUCCEEDED, workers.logs()
    assert workers.name_of(done.worker) == "w3"
    assert Run.objects.get(pk=run.pk).status == Run.Status.SUCCEEDED
    results = [r for r in tool_results(session.pk) if "status" not in r]
    assert len(results) == 1 and "coffee" in str(results[0]), results
    assert pending_confirmations(session_id=session.pk) == []
