"""core.cpu_priority: a worker lowers every one of its threads, those it makes later too,
never raises one, and refuses a value that is not a nice value. Run in a child process: a
priority once lowered cannot be raised back without privilege."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentdash.core.cpu_priority import priority_lower

ROOT = Path(__file__).resolve().parents[3]

CHILD = """
import json, os, sys, threading
from agentdash.core.cpu_priority import priority_lower

os.setpriority(os.PRIO_PROCESS, 0, int(sys.argv[1]))  # as started
go, made = threading.Event(), {}
before = threading.Thread(target=go.wait, daemon=True)  # made before: lowered with the rest
before.start()
now = priority_lower(int(sys.argv[2]))

def later():
    made["later"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

after = threading.Thread(target=later, daemon=True)
after.start(); after.join()
threads = {threading.get_native_id(), before.native_id}
threads = {t: os.getpriority(os.PRIO_PROCESS, t) for t in threads}
go.set(); before.join()
print(json.dumps({"now": now, "threads": sorted(threads.values()), "later": made["later"]}))
"""


def lowered(started: int, nice: int) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(started), str(nice)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=True,
    )
    found: dict[str, object] = json.loads(done.stdout)
    return found


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="per-thread nice is Linux's")
def test_every_thread_is_lowered_and_those_made_later_start_lowered() -> None:
    assert lowered(0, 10) == {"now": 10, "threads": [10, 10], "later": 10}


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="per-thread nice is Linux's")
def test_a_priority_already_lower_is_kept_and_zero_changes_nothing() -> None:
    assert lowered(15, 10) == {"now": 15, "threads": [15, 15], "later": 15}
    assert lowered(3, 0) == {"now": 3, "threads": [3, 3], "later": 3}


@pytest.mark.parametrize("nice", [-1, 20, 10**6])
def test_a_value_that_is_no_nice_value_is_refused(nice: int) -> None:
    with pytest.raises(ValueError, match="nice value is 0 to 19"):
        priority_lower(nice)
