"""Runs' cgroups on cgroup v2: children of one parent in a delegated subtree.

The parent is ``AGENTDASH_SANDBOX_CGROUP`` when that names a directory, else
``<the worker's own cgroup>/agentdash-sandbox``. cgroup v2 lets a cgroup hand controllers to
its children only while it holds no process itself; a worker alone in its delegated cgroup
(systemd's ``Delegate=yes``) is moved into a leaf beside the runs
(``<own>/agentdash-worker``) so that it can.

A run's memory counts everything v2 charges (anonymous, tmpfs and shared pages, kernel
objects); ``memory.oom.group`` makes an out-of-memory kill take the whole run, and
``cgroup.kill`` ends it in one step (Linux 5.14+; older kernels freeze and signal).
"""

from __future__ import annotations

import os
from pathlib import Path

from runtime.code_executors.sandbox.cgroups import (
    SUBDIR,
    CgroupTree,
    CgroupUnavailableError,
    Mount,
    RunCgroup,
    Sample,
    cgroup_mounts,
    on_disk,
    own_cgroups,
    read_keyed,
    remove_dir,
    signal_members,
    write,
)
from runtime.code_executors.sandbox.limits import SandboxLimits

__all__ = ["REQUIRED", "CgroupV2Run", "CgroupV2Tree", "v2_tree"]

REQUIRED = ("memory", "pids", "cpu")
PERIOD_US = 100_000
WORKER_LEAF = "agentdash-worker"


class CgroupV2Run(RunCgroup):
    kind = "cgroup v2"

    def __init__(self, path: Path, name: str, controllers: frozenset[str]) -> None:
        self.path = path
        self.name = name  # as /proc/*/cgroup says it
        self.controllers = controllers

    def discard(self) -> None:
        if self.path.exists():
            self._kill_now()
            self.remove()

    def _make(self) -> None:
        self.path.mkdir()

    def configure(self, limits: SandboxLimits) -> None:
        if "memory" in self.controllers:
            write(self.path / "memory.max", str(limits.memory_mb << 20))
            if (self.path / "memory.swap.max").exists():
                write(self.path / "memory.swap.max", "0")
            write(self.path / "memory.oom.group", "1")
        if "pids" in self.controllers:
            write(self.path / "pids.max", str(limits.pids_max))
        if "cpu" in self.controllers:
            write(self.path / "cpu.max", f"{max(1000, round(limits.cpus * PERIOD_US))} {PERIOD_US}")

    def attach(self, pid: int) -> None:
        write(self.path / "cgroup.procs", str(pid))

    def sample(self) -> Sample:
        usage = read_keyed(self.path / "cpu.stat").get("usage_usec", 0)
        memory = read_keyed(self.path / "memory.events")
        pids = read_keyed(self.path / "pids.events")
        return Sample(usage * 1000, memory.get("oom_kill", 0), pids.get("max", 0))

    def memory_peak(self) -> int | None:
        try:
            return int((self.path / "memory.peak").read_text())
        except (OSError, ValueError):
            return None

    def members(self) -> list[int]:
        try:
            return [int(pid) for pid in (self.path / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def populated(self) -> bool:
        return read_keyed(self.path / "cgroup.events").get("populated", 0) == 1

    def _kill_round(self) -> None:
        if (self.path / "cgroup.kill").exists():
            write(self.path / "cgroup.kill", "1")  # the kernel kills every member, forks too
            return
        write(self.path / "cgroup.freeze", "1")
        try:
            signal_members(self.members(), "", self.name)
        finally:
            write(self.path / "cgroup.freeze", "0")

    def remove(self) -> None:
        remove_dir(self.path)


class CgroupV2Tree(CgroupTree):
    kind = "cgroup v2"

    def __init__(self, parent: Path, name: str, controllers: frozenset[str]) -> None:
        self.parent = parent
        self.name = name.rstrip("/")
        self.controllers = controllers
        self.where = str(parent)

    def run(self, name: str) -> CgroupV2Run:
        return CgroupV2Run(self.parent / name, f"{self.name}/{name}", self.controllers)


def _controllers(path: Path, file: str) -> set[str]:
    try:
        return set((path / file).read_text().split())
    except OSError:
        return set()


def _enable(path: Path, wanted: tuple[str, ...]) -> None:
    """Hand ``wanted`` controllers to ``path``'s children (its ``cgroup.subtree_control``)."""
    missing = [c for c in wanted if c not in _controllers(path, "cgroup.subtree_control")]
    if missing:
        write(path / "cgroup.subtree_control", " ".join(f"+{c}" for c in missing))


def _enable_moving_self(base: Path, wanted: tuple[str, ...]) -> None:
    try:
        _enable(base, wanted)
        return
    except OSError as exc:
        if exc.errno != 16:  # EBUSY: base holds processes (the "no internal process" rule)
            raise
    leaf = base / WORKER_LEAF
    leaf.mkdir(exist_ok=True)
    write(leaf / "cgroup.procs", str(os.getpid()))
    try:
        _enable(base, wanted)
    except OSError as exc:
        if exc.errno != 16:
            raise
        raise CgroupUnavailableError(
            f"cgroup v2: {base} holds other processes, so it cannot hand controllers to the "
            "runs' cgroups: give the worker a delegated cgroup of its own (systemd: "
            "Delegate=yes) or set AGENTDASH_SANDBOX_CGROUP to an empty delegated cgroup"
        ) from exc


def v2_tree(
    parent: Path | None = None,
    *,
    mounts: list[Mount] | None = None,
    required: tuple[str, ...] = REQUIRED,
) -> CgroupV2Tree:
    """Runs' cgroups under ``parent`` (a delegated cgroup v2 directory) or the worker's own
    cgroup. Raises :class:`CgroupUnavailableError` naming what is missing."""
    mounts = cgroup_mounts() if mounts is None else mounts
    unified = next((m for m in mounts if m.fstype == "cgroup2"), None)
    if unified is None:
        raise CgroupUnavailableError("cgroup v2: not mounted")
    try:
        if parent is None:
            own = own_cgroups().get("", "/")
            base = on_disk(unified, own)
            offered = _controllers(base, "cgroup.controllers")
            if lacking := [c for c in required if c not in offered]:
                raise CgroupUnavailableError(
                    f"cgroup v2: {base} is not given the {', '.join(lacking)} controller(s) "
                    f"(it has: {' '.join(sorted(offered)) or 'none'})"
                )
            _enable_moving_self(base, required)
            parent = base / SUBDIR
            parent.mkdir(exist_ok=True)
        elif not (parent / "cgroup.procs").is_file():
            raise CgroupUnavailableError(f"cgroup v2: {parent} is not a cgroup directory")
        offered = _controllers(parent, "cgroup.controllers")
        if lacking := [c for c in required if c not in offered]:
            raise CgroupUnavailableError(
                f"cgroup v2: {parent} is not given the {', '.join(lacking)} controller(s)"
            )
        _enable(parent, required)
    except OSError as exc:
        raise CgroupUnavailableError(
            f"cgroup v2: cannot set up runs' cgroups ({exc}): the worker needs a delegated "
            "cgroup (systemd: Delegate=yes) or root"
        ) from exc
    name = "/" + str(parent.relative_to(unified.point)).strip(".").strip("/")
    root = unified.root.rstrip("/")
    return CgroupV2Tree(parent, f"{root}{name}".replace("//", "/") or "/", frozenset(required))
