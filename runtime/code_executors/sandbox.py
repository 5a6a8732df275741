"""Model-written Python run hermetically: bubblewrap namespaces plus resource limits.

Each run is a new process tree under ``bwrap`` (Debian's ``bubblewrap``, the sandbox
Flatpak uses; unprivileged, no setuid) in fresh user, network, PID, IPC, UTS and cgroup
namespaces:

- **no network**: the network namespace has only its own loopback, so a connection to
  127.0.0.1 reaches nothing of the host and any other address is unreachable;
- **no project files, no secrets**: the root is an empty read-only tmpfs with the system's
  ``/usr`` (and its ``/bin``, ``/lib`` links) bound read-only; no ``/etc``, no home, not the
  project; the environment is cleared (``PATH``, ``HOME``, ``LANG`` only);
- **a fresh, empty working directory** ``/work`` (and ``/tmp``), size-limited tmpfs that vanish
  with the namespace: nothing survives a run, two runs see nothing of each other;
- **limits** (:class:`SandboxLimits`): CPU time, address space, processes, file size, open
  files (``prlimit``), wall clock and output size (enforced here); all capabilities dropped,
  a new session (no terminal injection), killed with its parent.

When the host runs as root, the sandbox runs as ``nobody`` (a root-owned process ignores the
process limit). Where bubblewrap is missing or the kernel refuses unprivileged namespaces,
:func:`sandbox_check` raises :class:`SandboxUnavailableError` saying so: code is never run
outside the sandbox.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

__all__ = [
    "SandboxLimits",
    "SandboxOutcome",
    "SandboxUnavailableError",
    "sandbox_check",
    "sandbox_run",
]

NOBODY = 65534
WORK_DIR = "/work"
CHUNK = 64 * 1024
KILL_GRACE_S = 2.0


class SandboxUnavailableError(RuntimeError):
    """The sandbox cannot be set up here; nothing was run."""


@dataclass(frozen=True)
class SandboxLimits:
    """What one run may use. Every field is configurable; the defaults suit small analyses."""

    cpu_seconds: int = 5
    memory_mb: int = 256
    """Address space of each process (``RLIMIT_AS``)."""
    wall_seconds: float = 10.0
    processes: int = 16
    """Processes and threads of the sandbox's user at once (``RLIMIT_NPROC``)."""
    output_bytes: int = 1 << 20
    """Standard output and error together; past it the run is stopped."""
    file_mb: int = 16
    """The largest file the code may write (``RLIMIT_FSIZE``)."""
    work_mb: int = 64
    """Size of the working directory and of ``/tmp`` (each a tmpfs)."""
    open_files: int = 64

    def __post_init__(self) -> None:
        for name in ("cpu_seconds", "memory_mb", "processes", "output_bytes", "file_mb"):
            if getattr(self, name) < 1:
                raise ValueError(f"sandbox limit {name} must be at least 1")
        if self.wall_seconds <= 0 or self.work_mb < 1 or self.open_files < 8:
            raise ValueError("sandbox limits: wall_seconds > 0, work_mb ≥ 1, open_files ≥ 8")


@dataclass
class SandboxOutcome:
    """What a run did. ``stopped_by`` names the limit or denial that ended it, if any:
    ``wall_clock``, ``output``, ``cpu_time``, ``memory``, ``processes``, ``file_size``,
    ``disk``, ``network``, ``filesystem`` (read off the exit status and the last line of the
    traceback: a guide for people, not proof — the code writes its own stderr)."""

    stdout: str
    stderr: str
    exit_code: int
    stopped_by: str = ""
    duration_ms: float = 0.0
    truncated: bool = False
    limits: SandboxLimits = field(default_factory=SandboxLimits)


# The last line of a traceback, as the interpreter prints it, and what it means here.
_DENIALS = (
    (re.compile(r"^MemoryError\b"), "memory"),
    (re.compile(r"\[Errno 11\] Resource temporarily unavailable"), "processes"),
    (re.compile(r"\[Errno 27\] File too large"), "file_size"),
    (re.compile(r"\[Errno 28\] No space left on device"), "disk"),
    (re.compile(r"\[Errno (101|111|113|99)\]|gaierror|Name or service not known"), "network"),
    (re.compile(r"\[Errno (13|30|1|2)\] (Permission|Read-only|Operation|No such)"), "filesystem"),
)


def _stopped_by(exit_code: int, stderr: str) -> str:
    if exit_code in (128 + signal.SIGXCPU, -signal.SIGXCPU, 128 + signal.SIGKILL, -signal.SIGKILL):
        return "cpu_time"
    if exit_code in (128 + signal.SIGXFSZ, -signal.SIGXFSZ):
        return "file_size"
    if exit_code == 0:
        return ""
    # The last lines, not the last only: forked processes' tracebacks interleave.
    tail = [line for line in stderr[-4096:].splitlines() if line.strip()][-6:]
    for pattern, name in _DENIALS:
        if any(pattern.search(line) for line in reversed(tail)):
            return name
    return ""


def _python() -> str:
    """The interpreter inside: the system's (under /usr, reachable by ``nobody``)."""
    configured = os.environ.get("AGENTDASH_SANDBOX_PYTHON", "")
    for candidate in (configured, "/usr/bin/python3"):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise SandboxUnavailableError(
        "no Python for the sandbox: install Debian's python3 (it lives under /usr, the only "
        "tree the sandbox sees) or set AGENTDASH_SANDBOX_PYTHON to an interpreter under /usr"
    )


def _root_binds() -> list[str]:
    """/usr read-only, and /bin, /lib, /lib64, /sbin as the host has them (links or dirs)."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/lib", "/lib64", "/sbin"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    return args


def _command(python: str, limits: SandboxLimits, info_fd: int | None = None) -> list[str]:
    bwrap = shutil.which("bwrap")
    prlimit = shutil.which("prlimit")
    if not bwrap:
        raise SandboxUnavailableError(
            "bubblewrap (bwrap) is not installed: code execution needs it "
            "(scripts/sandbox.sh installs Debian's bubblewrap)"
        )
    if not prlimit:
        raise SandboxUnavailableError("prlimit (util-linux) is not installed: it sets the limits")
    work_bytes = str(limits.work_mb << 20)
    memory = limits.memory_mb << 20
    return [
        prlimit,
        f"--cpu={limits.cpu_seconds}:{limits.cpu_seconds + 1}",
        f"--as={memory}:{memory}",
        f"--fsize={limits.file_mb << 20}:{limits.file_mb << 20}",
        f"--nofile={limits.open_files}:{limits.open_files}",
        "--core=0:0",
        "--",
        bwrap,
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        *(["--info-fd", str(info_fd)] if info_fd is not None else []),
        "--cap-drop",
        "ALL",
        *_root_binds(),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        work_bytes,
        "--tmpfs",
        "/tmp",
        "--size",
        work_bytes,
        "--tmpfs",
        WORK_DIR,
        "--chdir",
        WORK_DIR,
        "--hostname",
        "sandbox",
        "--clearenv",
        "--setenv",
        "PATH",
        "/usr/bin:/bin",
        "--setenv",
        "HOME",
        WORK_DIR,
        "--setenv",
        "LANG",
        "C.UTF-8",
        "--remount-ro",
        "/",
        # The process limit is set inside: there it counts the sandbox's own processes (its
        # user namespace's), not every sandbox's of the same host user.
        prlimit,
        f"--nproc={limits.processes}:{limits.processes}",
        "--",
        python,
        "-I",  # isolated: no user site, no PYTHON* variables
        "-S",  # no site-packages: the standard library only
        "-B",
        "-",  # the program from standard input
    ]


def _identity() -> tuple[int | None, int | None, list[int] | None]:
    """User, group and groups to run as: ``nobody`` when we are root (the process limit does
    not hold for root), else as we are (``None``: no change)."""
    if os.geteuid() != 0:
        return None, None, None
    return NOBODY, NOBODY, []


@lru_cache(maxsize=1)
def _checked() -> str:
    python = _python()
    command = _command(python, SandboxLimits())
    user, group, groups = _identity()
    probe = "import socket; socket.socket().close(); print('ok')"
    try:
        found = subprocess.run(
            command,
            input=probe.encode(),
            capture_output=True,
            timeout=30,
            env={"PATH": "/usr/bin:/bin"},
            user=user,
            group=group,
            extra_groups=groups,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxUnavailableError(f"the sandbox could not start: {exc}") from exc
    if found.returncode != 0 or found.stdout.strip() != b"ok":
        said = found.stderr.decode("utf-8", "replace").strip()[-400:]
        raise SandboxUnavailableError(
            "the sandbox could not start (does this kernel allow unprivileged user "
            f"namespaces? sysctl kernel.unprivileged_userns_clone): {said or found.returncode}"
        )
    version = subprocess.run([command[command.index("--") + 1], "--version"], capture_output=True)
    return version.stdout.decode().strip() or "bubblewrap"


def sandbox_check() -> str:
    """Set up the sandbox once (a probe run); the sandbox's name and version. Raises
    :class:`SandboxUnavailableError`, saying why, when it cannot be had."""
    return _checked()


async def sandbox_run(code: str, limits: SandboxLimits | None = None) -> SandboxOutcome:
    """Run ``code`` (Python source) in a new sandbox; waits for it, within the limits."""
    limits = limits or SandboxLimits()
    sandbox_check()
    info_read, info_write = os.pipe()  # bwrap says there the sandbox's first process
    os.set_blocking(info_read, False)
    command = _command(_python(), limits, info_write)
    user, group, groups = _identity()
    started = time.monotonic()
    try:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={"PATH": "/usr/bin:/bin"},
            start_new_session=True,
            pass_fds=(info_write,),
            user=user,
            group=group,
            extra_groups=groups,
        )
    finally:
        os.close(info_write)
    reader = _Output(limits.output_bytes)
    stopped_by = ""
    try:
        assert process.stdin and process.stdout and process.stderr
        process.stdin.write(code.encode("utf-8", "surrogatepass"))
        await _close(process.stdin)
        finished: asyncio.Future[Any] = asyncio.ensure_future(
            asyncio.gather(
                reader.pump(process.stdout, "stdout"),
                reader.pump(process.stderr, "stderr"),
                process.wait(),
            )
        )
        full: asyncio.Future[Any] = asyncio.ensure_future(reader.full.wait())
        done, _ = await asyncio.wait(
            {finished, full}, timeout=limits.wall_seconds, return_when=asyncio.FIRST_COMPLETED
        )
        if not done:
            stopped_by = "wall_clock"
        elif reader.over:
            stopped_by = "output"
        if stopped_by:
            _kill(process, info_read)
        full.cancel()
        # Killed, the sandbox's pipes close; should one stay open, what was read is the output.
        await asyncio.wait({finished}, timeout=KILL_GRACE_S)
        finished.cancel()
        await asyncio.gather(finished, return_exceptions=True)
        exit_code = await process.wait()
    finally:
        if process.returncode is None:
            _kill(process, info_read)
            await process.wait()
        os.close(info_read)
    stdout, stderr = reader.text("stdout"), reader.text("stderr")
    return SandboxOutcome(
        stdout=stdout,
        stderr=stderr,
        exit_code=exit_code,
        stopped_by=stopped_by or _stopped_by(exit_code, stderr),
        duration_ms=(time.monotonic() - started) * 1000,
        truncated=reader.over,
        limits=limits,
    )


async def _close(stream: asyncio.StreamWriter) -> None:
    try:
        await stream.drain()
        stream.close()
        await stream.wait_closed()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the program ended before reading all of itself: its exit status says why


def _kill(process: asyncio.subprocess.Process, info_fd: int) -> None:
    """Kill bwrap and the sandbox's first process (its PID namespace dies with it)."""
    pids = [process.pid]
    try:
        info = json.loads(os.read(info_fd, 4096) or b"{}")
        pids.append(int(info["child-pid"]))
    except (OSError, ValueError, KeyError, TypeError):
        pass  # bwrap had not said it yet: killing bwrap takes the sandbox down with it
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


class _Output:
    """Both streams, kept up to the output limit together; reading stops past it."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept: dict[str, bytearray] = {"stdout": bytearray(), "stderr": bytearray()}
        self.total = 0
        self.over = False
        self.full = asyncio.Event()

    async def pump(self, stream: asyncio.StreamReader, name: str) -> None:
        """Read to the end; past the limit, read and drop (a pipe left unread never closes,
        and the process's end is only told once its pipes have)."""
        while chunk := await stream.read(CHUNK):
            room = self.limit - self.total
            if room > 0:
                self.kept[name] += chunk[:room]
            self.total += len(chunk)
            if self.total > self.limit and not self.over:
                self.over = True
                self.full.set()

    def text(self, name: str) -> str:
        return self.kept[name].decode("utf-8", "replace")
