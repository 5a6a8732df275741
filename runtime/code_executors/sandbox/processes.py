"""Starting, watching and reaping the sandbox's processes through pidfds, never bare PIDs.

Sandboxes are started from one thread of their own, which holds a new, empty session keyring
(credentials are per thread): what they start inherits that keyring, not the worker's.
A process is signalled and reaped through a pidfd opened while it was known to be the right
one (our unreaped child, or a member of the run's cgroup), so a reused PID is never hit.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from typing import IO, Any

from runtime.code_executors.sandbox import _libc

__all__ = ["Child", "exit_status", "pidfd_exited", "reap", "send_kill", "spawn"]

log = logging.getLogger(__name__)


def _own_keyring() -> None:
    try:
        _libc.join_new_session_keyring()
    except OSError as exc:  # a kernel without keyrings: nothing to inherit either
        log.warning("the sandbox starter has no keyring of its own: %s", exc)


@lru_cache(maxsize=1)
def _starter() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(1, "agentdash-sandbox-start", initializer=_own_keyring)


@dataclass
class Child:
    """A process we started: its ``Popen`` (for the pipes) and a pidfd."""

    popen: subprocess.Popen[bytes]
    pidfd: int

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def stdout(self) -> IO[bytes]:
        assert self.popen.stdout is not None
        return self.popen.stdout

    @property
    def stderr(self) -> IO[bytes]:
        assert self.popen.stderr is not None
        return self.popen.stderr


def _start(argv: list[str], stdin: int, pass_fds: tuple[int, ...], user: int | None) -> Child:
    extra: dict[str, Any] = {}
    if user is not None:
        extra = {"user": user, "group": user, "extra_groups": []}
    popen = subprocess.Popen(
        argv,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        pass_fds=pass_fds,
        env={"PATH": "/usr/bin:/bin"},
        start_new_session=True,
        close_fds=True,
        **extra,
    )
    # Our child, not reaped by anyone but us: its PID cannot be reused before this returns.
    return Child(popen, os.pidfd_open(popen.pid))


async def spawn(
    argv: list[str], *, stdin: int, pass_fds: tuple[int, ...], user: int | None
) -> Child:
    """Start ``argv`` from the starter thread, as ``user`` when given."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_starter(), _start, argv, stdin, pass_fds, user)


def pidfd_exited(pidfd: int) -> asyncio.Future[None]:
    """A future done when the process behind ``pidfd`` has exited (or is a zombie)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def ready() -> None:
        loop.remove_reader(pidfd)
        if not done.done():
            done.set_result(None)

    loop.add_reader(pidfd, ready)
    done.add_done_callback(lambda _: loop.remove_reader(pidfd))
    return done


def send_kill(pidfd: int) -> None:
    with contextlib.suppress(ProcessLookupError, OSError):
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)


def exit_status(result: os.waitid_result) -> int:
    """Popen's convention: the exit code, or minus the signal that killed it."""
    if result.si_code == os.CLD_EXITED:
        return result.si_status
    return -result.si_status


def reap(pidfd: int, *, block: bool) -> int | None:
    """Reap the process behind ``pidfd`` if it is our child and has exited: its status;
    ``None`` if it is not our child (someone else reaps it) or, not blocking, still runs."""
    flags = os.WEXITED | (0 if block else os.WNOHANG)
    try:
        result = os.waitid(os.P_PIDFD, pidfd, flags)
    except ChildProcessError:
        return None
    return None if result is None else exit_status(result)
