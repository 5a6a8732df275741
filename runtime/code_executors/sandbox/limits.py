"""What one sandboxed run may use, and what it did."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["STOPS", "SandboxLimits", "SandboxOutcome"]

# The values of ``SandboxOutcome.stopped_by``, each read off the supervisor's own evidence.
STOPS = (
    "wall_clock",
    "output",
    "cpu_time",
    "memory",
    "processes",
    "disk",
    "file_size",
    "left_running",
)


@dataclass(frozen=True)
class SandboxLimits:
    """Limits of one run, all of it together: every process the code starts, and every file it
    writes, counts against the run's limits (a cgroup of its own), not each process's."""

    cpu_seconds: float = 5
    """CPU time of all the run's processes together."""
    cpus: float = 1.0
    """CPU share: at most this many CPUs' worth at any moment."""
    memory_mb: int = 256
    """All the run's memory: its processes', its files in /work, /tmp and /dev/shm, shared
    memory, memfds and the kernel's objects made for it (inodes, page tables)."""
    wall_seconds: float = 10.0
    processes: int = 16
    """Processes and threads alive at once."""
    output_bytes: int = 1 << 20
    """Standard output and error together; past it the run is stopped."""
    file_mb: int = 16
    """The largest file the code may write."""
    work_mb: int = 64
    """Size of ``/work`` and of ``/tmp`` (each its own file system)."""
    files: int = 4096
    """Files and directories in ``/work`` and in ``/tmp`` (each)."""
    shm_mb: int | None = None
    """Size of ``/dev/shm``: ``None`` for as large as ``memory_mb`` (the memory limit is what
    stops it), ``0`` for no ``/dev/shm`` at all."""
    open_files: int = 64

    def __post_init__(self) -> None:
        for name in ("memory_mb", "processes", "output_bytes", "file_mb", "work_mb", "files"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"sandbox limit {name} must be a whole number, at least 1")
        for name in ("cpu_seconds", "cpus", "wall_seconds"):
            if not isinstance(getattr(self, name), int | float) or getattr(self, name) <= 0:
                raise ValueError(f"sandbox limit {name} must be a number above 0")
        if self.cpus < 0.01:
            raise ValueError("sandbox limit cpus must be at least 0.01")
        if self.open_files < 8:
            raise ValueError("sandbox limit open_files must be at least 8")
        if self.shm_mb is not None and (not isinstance(self.shm_mb, int) or self.shm_mb < 0):
            raise ValueError("sandbox limit shm_mb must be None, 0 (no /dev/shm) or a size")

    @property
    def pids_max(self) -> int:
        """The run's process count, the sandbox's own two (bubblewrap outside, the
        namespace's PID 1) included."""
        return self.processes + 2

    @property
    def shm_bytes(self) -> int:
        return (self.memory_mb if self.shm_mb is None else self.shm_mb) << 20


@dataclass
class SandboxOutcome:
    """What a run did.

    ``stopped_by`` names the limit that ended it (:data:`STOPS`), always from the supervisor's
    own evidence — its wall clock and output counter, the run's cgroup (OOM kills, refused
    forks, CPU time), its file systems seen from outside — never from what the code printed
    or its exit status: code that only claims to have been stopped (``MemoryError`` printed,
    ``exit(137)``) has ``stopped_by == ""`` and its own ``exit_code``.

    ``containment`` says how the run was held (``cgroup v1``, ``cgroup v2`` or
    ``weak: …``); ``usage`` what it used, as far as the supervisor measured it.
    """

    stdout: str
    stderr: str
    exit_code: int
    stopped_by: str = ""
    duration_ms: float = 0.0
    truncated: bool = False
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    containment: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
