"""The scale mode, end to end: PostgreSQL and Redis started by the project's scripts, a fresh
database migrated and seeded, daphne and Celery worker processes — a run waiting for approval
outlives every process it had. (Several daphnes and workers behind a load balancer:
test_scale_out.py.)

Without PostgreSQL or Redis a developer's run skips; in CI (``CI`` set) it fails instead.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agentdash.live_harness import Browserless, Processes
from tests.agentdash.scale_harness import scale_backends, scale_env

pytestmark = [pytest.mark.slow, pytest.mark.own_servers]


@pytest.fixture(scope="module")
def backends() -> Iterator[tuple[str, str]]:
    """(PostgreSQL URL of a fresh database of this test, Redis URL)."""
    with scale_backends() as found:
        yield found


def test_a_waiting_run_outlives_every_daphne_and_worker_killed(
    backends: tuple[str, str], tmp_path: Path
) -> None:
    """alice's reimbursement waits for approval; the daphne she used and every worker are
    SIGKILLed. On a new daphne, with no worker alive yet, she approves a lower amount; a new
    worker resumes the run and the tool pays what she approved, once."""
    env = scale_env(backends, tmp_path / "var")
    procs = Processes(tmp_path)
    try:
        procs.worker("worker-1", env)
        alice = Browserless(procs.daphne("daphne-a", env))
        alice.log_in("alice")
        session_id = alice.new_chat("support_desk", "Please reimburse invoice INV-1002")
        found = alice.snapshot(session_id)
        assert [run["status"] for run in found["runs"]] == ["waiting"], found["runs"]
        for _, proc in procs.procs:
            proc.send_signal(signal.SIGKILL)
        for _, proc in procs.procs:
            proc.wait(30)

        alice.url = procs.daphne("daphne-b", env)  # her login is in the database
        with alice.opener.open(f"{alice.url}/sessions/{session_id}/confirmations/") as got:
            (request,) = json.loads(got.read())["pending"]
        assert request["tool"] == "reimburse_invoice"
        assert request["payload"] == {"amount": 75.5, "currency": "EUR"}
        alice.post(
            f"/sessions/{session_id}/confirmations/{request['request_id']}/",
            f"/sessions/{session_id}/",
            {"decision": "approve", "payload": json.dumps({"amount": 40, "currency": "EUR"})},
        )
        procs.worker("worker-2", env)
        alice.runs_settled(session_id)
        found = alice.snapshot(session_id)
        assert [run["status"] for run in found["runs"]] == ["succeeded", "succeeded"]
        said = json.dumps([e for e in found["events"]])
        assert said.count("reimbursed: 40.00 EUR") >= 1 and "75.50 EUR reimbursed" not in said
        # The worker yields the CPU to the web processes: every thread of it (its agents',
        # its live pipeline's) at nice 10 (AGENTDASH_WORKER_NICE), daphne as started.
        ours = os.getpriority(os.PRIO_PROCESS, 0)
        nice = {name: threads_nice(proc.pid) for name, proc in procs.procs if proc.poll() is None}
        assert nice == {"daphne-b": {ours}, "worker-2": {max(ours, 10)}}, nice
    except BaseException as error:
        raise AssertionError(f"{error!r}\n{procs.logs()}") from error
    finally:
        procs.stop()


def threads_nice(pid: int) -> set[int]:
    """The nice values of the threads of process ``pid`` (Linux's ``/proc``)."""
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:  # the thread ended meanwhile
            continue
        found.add(int(stat.rsplit(")", 1)[1].split()[16]))
    return found
