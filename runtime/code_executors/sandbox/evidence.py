"""What stopped a run, from the supervisor's own evidence — its wall clock and output counter,
the run's cgroup, the run's file systems read from the host — and what the run used.

Never from what the code printed or its exit status: both are the code's to choose.
"""

from __future__ import annotations

from typing import Any

from runtime.code_executors.sandbox.cgroups import RunCgroup
from runtime.code_executors.sandbox.limits import SandboxLimits
from runtime.code_executors.sandbox.slots import RunFiles

__all__ = ["limit_reached", "stopped_and_usage"]


def limit_reached(cgroup: RunCgroup, limits: SandboxLimits) -> str:
    """The limit the run reached so far, if any: an OOM kill (``memory``), a refused fork
    (``processes``), its CPU time (``cpu_time``)."""
    sample = cgroup.sample()
    if sample.oom_kills:
        return "memory"
    if sample.refused_forks:
        return "processes"
    if sample.cpu_ns >= int(limits.cpu_seconds * 1e9):
        return "cpu_time"
    return ""


def stopped_and_usage(
    *,
    stopped_by: str,
    exit_code: int,
    cgroup: RunCgroup | None,
    files: RunFiles | None,
    limits: SandboxLimits,
) -> tuple[str, dict[str, Any]]:
    """``stopped_by`` (what the supervisor stopped the run for, else what the evidence says
    ended it) and the run's usage.

    After the run: an OOM kill in its cgroup is ``memory`` whatever the exit status (a
    process of the run was killed); a refused fork, all the CPU time, a full file system or
    a file at the size limit name the stop only when the code then failed (non-zero exit):
    code that met a limit and carried on to a clean end was not stopped."""
    usage: dict[str, Any] = {}
    failed = exit_code != 0
    if cgroup is not None:
        sample = cgroup.sample()
        peak = cgroup.memory_peak()
        usage["cpu_ms"] = round(sample.cpu_ns / 1e6, 1)
        if peak is not None:
            usage["memory_peak_mb"] = round(peak / (1 << 20), 1)
        if sample.oom_kills:
            usage["oom_kills"] = sample.oom_kills
        if sample.refused_forks:
            usage["refused_forks"] = sample.refused_forks
        if not stopped_by:
            if sample.oom_kills:
                stopped_by = "memory"
            elif failed and sample.refused_forks:
                stopped_by = "processes"
            elif failed and sample.cpu_ns >= int(limits.cpu_seconds * 1e9):
                stopped_by = "cpu_time"
    if files is not None:
        found = files.usage()
        usage["files"] = {
            name: {"kb": fs["bytes"] >> 10, "inodes": fs["inodes"]} for name, fs in found.items()
        }
        if not stopped_by and failed:
            if files.full():
                stopped_by = "disk"
            elif files.file_at_limit():
                stopped_by = "file_size"
    return stopped_by, usage
