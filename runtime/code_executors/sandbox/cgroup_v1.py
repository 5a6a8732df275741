"""Runs' cgroups on cgroup v1: one directory in each of the memory, pids, cpu and cpuacct
hierarchies (and freezer, where mounted), under the worker's own cgroup of each.

Memory is charged with everything the kernel accounts to it in v1: anonymous memory, tmpfs
and shared memory pages (``/work``, ``/dev/shm``, SysV, memfd) and kernel objects (inodes,
dentries, page tables), which the kernel feeds to the same counter.
"""

from __future__ import annotations

import contextlib
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

__all__ = ["CgroupV1Run", "CgroupV1Tree", "v1_tree"]

REQUIRED = ("memory", "pids", "cpu", "cpuacct")
PERIOD_US = 100_000


class CgroupV1Run(RunCgroup):
    kind = "cgroup v1"

    def __init__(self, dirs: dict[str, Path], paths: dict[str, str]) -> None:
        self.dirs = dirs  # controller → the run's directory
        self.paths = paths  # controller → its path as /proc/*/cgroup says it
        self.unique = list(dict.fromkeys(dirs.values()))  # cpu and cpuacct may share one

    def discard(self) -> None:
        if any(path.exists() for path in self.unique):
            self._kill_now()
            self.remove()

    def _make(self) -> None:
        for path in self.unique:
            path.mkdir(parents=True)

    def configure(self, limits: SandboxLimits) -> None:
        memory = self.dirs["memory"]
        write(memory / "memory.limit_in_bytes", str(limits.memory_mb << 20))
        if (memory / "memory.memsw.limit_in_bytes").exists():  # swap too, where accounted
            write(memory / "memory.memsw.limit_in_bytes", str(limits.memory_mb << 20))
        write(self.dirs["pids"] / "pids.max", str(limits.pids_max))
        cpu = self.dirs["cpu"]
        write(cpu / "cpu.cfs_period_us", str(PERIOD_US))
        write(cpu / "cpu.cfs_quota_us", str(max(1000, round(limits.cpus * PERIOD_US))))

    def attach(self, pid: int) -> None:
        for path in self.unique:
            write(path / "cgroup.procs", str(pid))

    def sample(self) -> Sample:
        try:
            cpu_ns = int((self.dirs["cpuacct"] / "cpuacct.usage").read_text())
        except (OSError, ValueError):
            cpu_ns = 0
        oom = read_keyed(self.dirs["memory"] / "memory.oom_control")
        pids = read_keyed(self.dirs["pids"] / "pids.events")
        return Sample(cpu_ns, oom.get("oom_kill", 0), pids.get("max", 0))

    def memory_peak(self) -> int | None:
        try:
            return int((self.dirs["memory"] / "memory.max_usage_in_bytes").read_text())
        except (OSError, ValueError):
            return None

    def members(self) -> list[int]:
        try:
            text = (self.dirs["pids"] / "cgroup.procs").read_text()
        except OSError:
            return []
        return [int(pid) for pid in text.split()]

    def _freeze(self, state: str) -> None:
        if "freezer" in self.dirs:
            with contextlib.suppress(OSError):
                write(self.dirs["freezer"] / "freezer.state", state)

    def _kill_round(self) -> None:
        # Frozen, no member can fork or exit between the list and the signals.
        self._freeze("FROZEN")
        try:
            signal_members(self.members(), "pids", self.paths["pids"])
        finally:
            self._freeze("THAWED")  # killed tasks die once thawed

    def populated(self) -> bool:
        return bool(self.members())

    def remove(self) -> None:
        for path in self.unique:
            remove_dir(path)


class CgroupV1Tree(CgroupTree):
    kind = "cgroup v1"

    def __init__(self, parents: dict[str, Path], paths: dict[str, str]) -> None:
        self.parents = parents
        self.paths = paths
        self.where = ", ".join(sorted({str(path) for path in parents.values()}))

    def run(self, name: str) -> CgroupV1Run:
        return CgroupV1Run(
            {c: parent / name for c, parent in self.parents.items()},
            {c: f"{path.rstrip('/')}/{name}" for c, path in self.paths.items()},
        )


def v1_tree(mounts: list[Mount] | None = None) -> CgroupV1Tree:
    """Runs' cgroups under the worker's own cgroup of each v1 hierarchy. Raises
    :class:`CgroupUnavailableError` naming the hierarchies that are missing or not ours."""
    mounts = cgroup_mounts() if mounts is None else mounts
    own = own_cgroups()
    parents: dict[str, Path] = {}
    paths: dict[str, str] = {}
    missing = []
    for controller in (*REQUIRED, "freezer"):
        mount = next((m for m in mounts if m.fstype == "cgroup" and controller in m.options), None)
        if mount is None or controller not in own:
            if controller != "freezer":
                missing.append(controller)
            continue
        parents[controller] = on_disk(mount, own[controller]) / SUBDIR
        paths[controller] = f"{own[controller].rstrip('/')}/{SUBDIR}"
    if missing:
        raise CgroupUnavailableError(f"cgroup v1: no {', '.join(missing)} hierarchy mounted")
    for parent in set(parents.values()):
        try:
            parent.mkdir(exist_ok=True)
        except OSError as exc:
            raise CgroupUnavailableError(
                f"cgroup v1: cannot make {parent} ({exc.strerror}): the worker needs to be "
                "root, or to own its cgroups"
            ) from exc
    return CgroupV1Tree(parents, paths)
