"""Slots: what a run holds of the host while it runs, one run per slot at a time, across every
worker process of the host.

A slot is a lock file (``flock``, released by the kernel if the worker dies), a user ID of
its own when the worker is root (``uid_base + index``: per-user kernel quotas — processes,
inotify instances, message queues, pending signals, locked memory — are then the run's own,
and one run exhausting them does not starve another), the name of the run's cgroup, and a
directory on the host where the run's file systems are mounted (when the worker is root):
``/work``, ``/tmp`` and ``/dev/shm`` as tmpfs with a size and a number of inodes each, which
the supervisor can read after the run (was a disk full?) and unmounts.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import itertools
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from runtime.code_executors.sandbox import _libc
from runtime.code_executors.sandbox.limits import SandboxLimits

__all__ = ["RunFiles", "Slot", "SlotPool", "SlotsBusyError"]

WAIT_S = 30.0
USERS = Path("/run/agentdash-sandbox-users")  # every root pool's user IDs, host-wide
MOUNT_FLAGS = _libc.MS_NOSUID | _libc.MS_NODEV


class SlotsBusyError(RuntimeError):
    """Every slot stayed busy for :data:`WAIT_S`."""


@dataclass
class Slot:
    index: int
    name: str
    uid: int | None
    lock_fd: int
    home: Path


class SlotPool:
    """``count`` slots whose locks live in ``directory``. Runs' cgroups are named after the
    pool as well as the slot (``<tag>-slot-<n>``, the tag from the directory), so that two
    pools on one host (two directories) never take each other's cgroups for stale."""

    def __init__(self, directory: Path, count: int, uid_base: int | None) -> None:
        self.directory = directory
        self.count = count
        self.uid_base = uid_base
        self.tag = hashlib.sha256(os.path.abspath(directory).encode()).hexdigest()[:8]
        # The sandboxes' PID 1, named by what it holds (prepare() writes it once): a copy in
        # use is never replaced under a run.
        self._shell = Path(os.path.realpath("/bin/sh")).read_bytes()
        self.init = directory / f"init-{hashlib.sha256(self._shell).hexdigest()[:16]}"
        self.empty = directory / "empty"
        self._next = itertools.count()

    def prepare(self) -> None:
        """Make the directory: the worker's own, traversable (the sandbox's user binds its
        file systems from below it) but not listable by others; the sandboxes' PID 1 (a
        copy of /bin/sh they may execute but not read: a process running a binary it cannot
        read is not dumpable, so the code cannot reach into it); an empty directory (to hide
        host directories with); and, for a root worker, this pool's user IDs, refused if
        another pool of the host uses any of them."""
        self.directory.mkdir(mode=0o711, parents=True, exist_ok=True)
        found = self.directory.lstat()
        if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.geteuid():
            raise PermissionError(f"{self.directory} is not a directory of this user's")
        os.chmod(self.directory, 0o711)
        self.empty.mkdir(mode=0o555, exist_ok=True)
        # Named by what it holds and never written again: a worker starting on the same host
        # (the same directory) used to replace it while another's sandboxes were binding it,
        # and their runs failed ("Can't bind mount …/init"). A new /bin/sh is a new file.
        if not self.init.exists():
            partial = self.directory / f".init-{os.getpid()}"
            partial.write_bytes(self._shell)
            os.chmod(partial, 0o111)
            os.replace(partial, self.init)  # two workers at once write the same bytes
        if self.uid_base is not None:
            self._claim_users()

    def _claim_users(self) -> None:
        assert self.uid_base is not None
        registry = USERS
        registry.mkdir(mode=0o700, exist_ok=True)
        mine = (self.uid_base, self.uid_base + self.count)
        for entry in registry.iterdir():
            if entry.name == self.tag:
                continue
            try:
                where, base, count = entry.read_text().split("\n")[:3]
            except (OSError, ValueError):
                continue
            theirs = (int(base), int(base) + int(count))
            if Path(where).is_dir() and mine[0] < theirs[1] and theirs[0] < mine[1]:
                raise PermissionError(
                    f"the sandbox pool in {where} uses user IDs {theirs[0]}-{theirs[1] - 1}, "
                    f"which overlap this pool's ({mine[0]}-{mine[1] - 1}): give each "
                    "AGENTDASH_SANDBOX_DIR its own AGENTDASH_SANDBOX_UID_BASE"
                )
        (registry / self.tag).write_text(f"{self.directory}\n{self.uid_base}\n{self.count}\n")

    def _try(self, index: int) -> Slot | None:
        fd = os.open(self.directory / f"slot-{index}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        home = self.directory / f"slot-{index}"
        home.mkdir(mode=0o711, exist_ok=True)
        uid = None if self.uid_base is None else self.uid_base + index
        return Slot(index, f"{self.tag}-slot-{index}", uid, fd, home)

    async def acquire(self) -> Slot:
        """A free slot; waits while all are busy. Raises :class:`SlotsBusyError`."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WAIT_S
        while True:
            start = next(self._next)  # spread the runs of one process over the slots
            for step in range(self.count):
                slot = self._try((start + step) % self.count)
                if slot is not None:
                    return slot
            if loop.time() > deadline:
                raise SlotsBusyError(
                    f"all {self.count} sandbox slots stayed busy for {WAIT_S:.0f} s "
                    "(AGENTDASH_SANDBOX_SLOTS sets how many runs may run at once)"
                )
            await asyncio.sleep(0.05)

    def release(self, slot: Slot) -> None:
        os.close(slot.lock_fd)  # closing drops the lock

    def sweep(self, discard: Callable[[Slot], None]) -> int:
        """``discard`` what runs of dead workers left in every slot no one holds (their
        processes die with their worker; their cgroups and mounts stay); how many were
        looked at."""
        swept = 0
        for index in range(self.count):
            slot = self._try(index)
            if slot is None:
                continue
            try:
                discard(slot)
                swept += 1
            finally:
                self.release(slot)
        return swept


class RunFiles:
    """A run's ``/work``, ``/tmp`` and ``/dev/shm``: tmpfs mounts below the slot's directory,
    owned by the slot's user, each with a size and an inode count."""

    NAMES = ("work", "tmp", "shm")

    def __init__(self, slot: Slot, limits: SandboxLimits) -> None:
        self.slot = slot
        self.limits = limits
        work = (limits.work_mb << 20, limits.files)
        self.sizes = {"work": work, "tmp": work, "shm": (limits.shm_bytes, limits.files)}
        self.mounted: list[str] = []

    def path(self, name: str) -> Path:
        return self.slot.home / name

    def clear(self) -> None:
        """Unmount whatever is mounted where the run's file systems go (a dead run's)."""
        for name in self.NAMES:
            for _ in range(16):
                if not _libc.umount(str(self.path(name))):
                    break

    def make(self) -> None:
        self.clear()
        owner = self.slot.uid if self.slot.uid is not None else os.geteuid()
        for name in self.NAMES:
            size, inodes = self.sizes[name]
            if size <= 0:
                continue
            target = self.path(name)
            target.mkdir(mode=0o700, exist_ok=True)
            options = f"size={size},nr_inodes={inodes},mode=0700,uid={owner},gid={owner}"
            _libc.mount("agentdash-sandbox", str(target), "tmpfs", MOUNT_FLAGS, options)
            self.mounted.append(name)

    def usage(self) -> dict[str, dict[str, int]]:
        """Bytes and inodes used and available in each, read from the host."""
        found = {}
        for name in self.mounted:
            with contextlib.suppress(OSError):
                fs = os.statvfs(self.path(name))
                found[name] = {
                    "bytes": (fs.f_blocks - fs.f_bfree) * fs.f_frsize,
                    "bytes_free": fs.f_bavail * fs.f_frsize,
                    "inodes": fs.f_files - fs.f_ffree,
                    "inodes_free": fs.f_ffree,
                }
        return found

    def full(self) -> bool:
        """Whether a file system of the run ran out of space or inodes."""
        return any(
            fs["bytes_free"] < 4096 or fs["inodes_free"] == 0 for fs in self.usage().values()
        )

    def file_at_limit(self) -> bool:
        """Whether the run wrote a file up to the file-size limit: its blocks, not its size (a
        sparse file claims a size it never wrote). Walked without recursion and without
        following links, however deep the run made its directories."""
        limit = self.limits.file_mb << 20
        folders = [str(self.path(name)) for name in self.mounted]
        while folders:
            with contextlib.suppress(OSError), os.scandir(folders.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
                    elif (
                        entry.is_file(follow_symlinks=False)
                        and entry.stat(follow_symlinks=False).st_blocks * 512 >= limit
                    ):
                        return True
        return False

    def remove(self) -> None:
        for name in self.mounted:
            _libc.umount(str(self.path(name)))
        self.mounted = []
