"""A worker's CPU priority: below the web processes' on a host they share.

Runs are background work; the pages and sockets watching them are what people wait on. A
Celery worker running twenty agents flat out takes every core it can get, and on a host
that also runs daphne (and PostgreSQL) a span's message then waited for a core behind the
agents' steps: measured on two cores, a span reached the browser in about half the time
with the workers at nice 10 (docs/BENCHMARKS.md, "Live pipeline"). Where the worker has
the host to itself, its priority changes nothing: there is nobody to yield to.

Linux keeps a nice value per thread, and a thread starts with its creator's: every thread
of the process is lowered, so those made later are too. Lowering one's priority needs no
privilege; raising it back would, so this only ever lowers.
"""

from __future__ import annotations

import logging
import os

logger = logging.getLogger(__name__)

NICE_MAX = 19


def priority_lower(nice: int) -> int:
    """Give every thread of this process at least ``nice`` (0–19; 0 leaves it as it is).
    Returns the process's nice value afterwards."""
    if not 0 <= nice <= NICE_MAX:
        raise ValueError(f"a nice value is 0 to {NICE_MAX}, not {nice}")
    try:
        threads = [int(tid) for tid in os.listdir("/proc/self/task")]
    except OSError:  # not Linux: the value is the process's
        threads = [0]
    for thread in threads:
        try:
            if os.getpriority(os.PRIO_PROCESS, thread) < nice:
                os.setpriority(os.PRIO_PROCESS, thread, nice)
        except ProcessLookupError:  # the thread ended meanwhile
            continue
        except PermissionError:  # a sandbox that refuses it: run as it is
            logger.warning("could not lower this worker's CPU priority to nice %d", nice)
            break
    return os.getpriority(os.PRIO_PROCESS, 0)
