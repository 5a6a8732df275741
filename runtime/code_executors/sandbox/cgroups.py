"""One cgroup per run: made before the code starts, killed and removed after it, whatever the
code did. Both kernels' interfaces are supported — cgroup v2 (a delegated subtree, as under
systemd or a container runtime) and v1 (the memory, pids, cpu, cpuacct and freezer
hierarchies, as on a plain root VM) — behind :class:`RunCgroup`.

Processes are signalled through pidfds, each checked to be a member of the run's cgroup
after its pidfd was opened: a PID that was reused by then belongs to another cgroup and is
left alone.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from runtime.code_executors.sandbox.limits import SandboxLimits

__all__ = [
    "CgroupTree",
    "CgroupUnavailableError",
    "RunCgroup",
    "Sample",
    "cgroup_mounts",
    "own_cgroups",
    "read_keyed",
    "signal_members",
]

SUBDIR = "agentdash-sandbox"
EMPTY_WAIT_S = 10.0


class CgroupUnavailableError(RuntimeError):
    """No cgroup can be had for runs here; the message says what is missing."""


@dataclass(frozen=True)
class Sample:
    """The kernel's account of a run so far."""

    cpu_ns: int
    oom_kills: int
    refused_forks: int


@dataclass(frozen=True)
class Mount:
    fstype: str
    point: Path
    root: str
    options: frozenset[str]


def cgroup_mounts(mountinfo: str = "/proc/self/mountinfo") -> list[Mount]:
    """The cgroup (v1) and cgroup2 file systems mounted here."""
    found = []
    for line in Path(mountinfo).read_text().splitlines():
        head, _, tail = line.partition(" - ")
        fields, rest = head.split(), tail.split()
        if len(fields) < 5 or len(rest) < 3 or rest[0] not in ("cgroup", "cgroup2"):
            continue
        point = fields[4].encode().decode("unicode_escape")  # \040 for a space
        found.append(Mount(rest[0], Path(point), fields[3], frozenset(rest[2].split(","))))
    return found


def own_cgroups(pid: int | str = "self") -> dict[str, str]:
    """The cgroup of ``pid`` in each hierarchy: controller (``""`` for v2) → path."""
    found: dict[str, str] = {}
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            found[controller] = path
    return found


def on_disk(mount: Mount, path: str) -> Path:
    """Where cgroup ``path`` (as /proc/*/cgroup says it) lives under ``mount``."""
    root = mount.root.rstrip("/")
    if root and (path == root or path.startswith(root + "/")):
        path = path[len(root) :]
    return mount.point / path.lstrip("/")


def read_keyed(path: Path) -> dict[str, int]:
    """A flat-keyed cgroup file (``key value`` lines) as numbers; missing keys are absent."""
    found: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            with contextlib.suppress(ValueError):
                found[key] = int(value)
    return found


def write(path: Path, value: str) -> None:
    with open(path, "w") as handle:
        handle.write(value)


def member_of(pid: int, controller: str, path: str) -> bool:
    """Whether ``pid`` is in cgroup ``path`` of hierarchy ``controller`` (``""``: v2)."""
    try:
        return own_cgroups(pid).get(controller) == path
    except (OSError, ValueError):
        return False


def signal_members(pids: list[int], controller: str, path: str) -> int:
    """SIGKILL each of ``pids`` still in the run's cgroup, through a pidfd; how many."""
    sent = 0
    for pid in pids:
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            continue  # gone already
        try:
            # Checked after the pidfd was opened: if ``pid`` now names another process, that
            # process is not in the run's cgroup, and the pidfd (of the one that was) is dead.
            if member_of(pid, controller, path):
                with contextlib.suppress(ProcessLookupError):
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                    sent += 1
        finally:
            os.close(pidfd)
    return sent


class RunCgroup(abc.ABC):
    """The cgroup of one run."""

    kind: str

    @abc.abstractmethod
    def discard(self) -> None:
        """Kill and remove a cgroup of this name left by a run whose worker died."""

    def create(self) -> None:
        """Make the cgroup (after discarding a stale one of the same name)."""
        self.discard()
        self._make()

    @abc.abstractmethod
    def _make(self) -> None:
        """mkdir the cgroup."""

    @abc.abstractmethod
    def configure(self, limits: SandboxLimits) -> None:
        """Write the run's limits; before any process joins."""

    @abc.abstractmethod
    def attach(self, pid: int) -> None:
        """Move ``pid`` (a process that has not started the code yet) into the cgroup."""

    @abc.abstractmethod
    def sample(self) -> Sample:
        """CPU time, OOM kills and refused forks so far."""

    @abc.abstractmethod
    def memory_peak(self) -> int | None:
        """The most memory the run held at once, in bytes, where the kernel says it."""

    @abc.abstractmethod
    def members(self) -> list[int]:
        """PIDs of the processes in the cgroup now."""

    @abc.abstractmethod
    def populated(self) -> bool:
        """Whether a process of the run is still in the cgroup."""

    @abc.abstractmethod
    def _kill_round(self) -> None:
        """Signal every member once (the kernel's own ``cgroup.kill``, or frozen and through
        pidfds)."""

    def _kill_now(self) -> None:
        """Kill without waiting for the end (a stale cgroup, before it is removed)."""
        for _ in range(100):
            if not self.populated():
                return
            self._kill_round()

    async def kill(self) -> bool:
        """Kill every process of the run and wait until none is left; ``False`` if some
        would not go within :data:`EMPTY_WAIT_S` (stuck in the kernel)."""
        for _ in range(100):
            if not self.populated():
                return True
            self._kill_round()
            if await wait_until(lambda: not self.populated(), timeout=0.2):
                return True
        return await wait_until(lambda: not self.populated())

    @abc.abstractmethod
    def remove(self) -> None:
        """Remove the (empty) cgroup; nothing when it is gone."""


class CgroupTree(abc.ABC):
    """Where runs' cgroups are made."""

    kind: str
    where: str

    @abc.abstractmethod
    def run(self, name: str) -> RunCgroup:
        """The cgroup for the run in slot ``name`` (not made yet)."""

    def check(self) -> None:
        """Make and remove a cgroup; raises :class:`CgroupUnavailableError` saying why not."""
        probe = self.run(f"probe-{os.getpid()}")
        try:
            probe.create()
            probe.configure(SandboxLimits())
        except OSError as exc:
            raise CgroupUnavailableError(
                f"{self.kind} at {self.where}: cannot make a run's cgroup: {exc}"
            ) from exc
        finally:
            with contextlib.suppress(OSError):
                probe.remove()


async def wait_until(empty: Callable[[], bool], timeout: float = EMPTY_WAIT_S) -> bool:
    """Poll ``empty()`` with a growing pause until true or ``timeout``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    pause = 0.001
    while not empty():
        if loop.time() > deadline:
            return False
        await asyncio.sleep(pause)
        pause = min(pause * 2, 0.05)
    return True


def remove_dir(path: Path) -> None:
    """rmdir a cgroup; a cgroup whose last process is still being released answers EBUSY for
    a moment, so try a few times."""
    for attempt in range(50):
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if exc.errno != 16 or attempt == 49:  # EBUSY
                raise
            os.sched_yield()
