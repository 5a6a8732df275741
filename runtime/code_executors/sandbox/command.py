"""The command line of one sandbox: a gate, then bubblewrap, then the interpreter.

The gate (``/bin/sh``) waits on a pipe until the supervisor has put it into the run's cgroup
and set its limits, then becomes bubblewrap: nothing of the sandbox exists before the
process is in its cgroup. Bubblewrap then makes, in new user, mount, PID, network, IPC, UTS
and cgroup namespaces:

- a root that is an empty read-only tmpfs with the system's ``/usr`` (and its ``/bin``,
  ``/lib`` links) bound read-only: no ``/etc``, no home, not the project;
- ``/work`` and ``/tmp`` (and ``/dev/shm``), tmpfs of the run's own size;
- a minimal, read-only ``/dev`` (null, zero, full, random, urandom; no terminal);
- ``/proc`` of its own PID namespace, with ``/proc/keys`` and ``/proc/key-users`` masked;
- no further user namespaces (``--disable-userns``), no capabilities, a new session, the
  system-call filter (:mod:`.seccomp`) loaded before anything of the sandbox runs.

The namespace's PID 1 is a small shell of ours (:data:`INIT`, ``--as-pid-1``): when it
exits, the kernel kills everything else in the namespace, and bubblewrap kills it should the
worker die. It runs the interpreter as its child; when that ends it tells the supervisor (the
*report* pipe) and waits for its word (the *hold* pipe) before it exits. Meanwhile the
supervisor looks into the run's cgroup: any process other than bubblewrap and this shell was
left running by the code; the run is then stopped (``left_running``) rather than reported
as having ended by itself.
"""

from __future__ import annotations

import os
from pathlib import Path

from runtime.code_executors.sandbox.limits import SandboxLimits

__all__ = ["GATE", "INIT", "WORK_DIR", "bwrap_command", "gate_command"]

WORK_DIR = "/work"
# Standard input is the gate: one line "go" (nothing, EOF, anything else: do not start).
GATE = 'read -r go && [ "$go" = go ] || exit 125; exec "$@"'
DEVICES = ("null", "zero", "full", "random", "urandom")
MASKED = ("/proc/keys", "/proc/key-users", "/proc/sysrq-trigger", "/proc/kcore")
# $1: the report pipe's fd, $2: the hold pipe's, $3: the program's (a sealed memfd), then the
# interpreter's command line. Fds are opened anew by path (sh's redirections name only 0-9);
# the interpreter runs in the background and is waited for with the shell's own complaints
# sent nowhere (sh would write "Killed" into the code's stderr).
INIT = (
    'report="$1"; hold="$2"; code="$3"; shift 3; '
    '"$@" <"/proc/self/fd/$code" & wait "$!" 2>/dev/null; status=$?; '
    'echo "$status" >"/proc/self/fd/$report"; read -r _ <"/proc/self/fd/$hold"; exit "$status"'
)


def gate_command(command: list[str]) -> list[str]:
    return ["/bin/sh", "-c", GATE, "agentdash-sandbox-gate", *command]


def _root_binds() -> list[str]:
    """/usr read-only, and /bin, /lib, /lib64, /sbin as the host has them (links or dirs)."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/lib", "/lib64", "/lib32", "/libx32", "/sbin"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    return args


def _dev() -> list[str]:
    args = ["--perms", "0755", "--size", "65536", "--tmpfs", "/dev"]
    for device in DEVICES:
        args += ["--dev-bind", f"/dev/{device}", f"/dev/{device}"]
    for number, name in enumerate(("stdin", "stdout", "stderr")):
        args += ["--symlink", f"/proc/self/fd/{number}", f"/dev/{name}"]
    return [*args, "--symlink", "/proc/self/fd", "/dev/fd"]


def _file_system(name: str, target: str, size: int, host: Path | None) -> list[str]:
    """``target`` as the run's own tmpfs: bound from the host when the supervisor mounted it
    (it has an inode count then, and can be read after the run), else made by bubblewrap."""
    if size <= 0:
        return []
    if host is not None:
        return ["--bind", str(host / name), target]
    return ["--perms", "0700", "--size", str(size), "--tmpfs", target]


def bwrap_command(
    *,
    bwrap: str,
    python: str,
    limits: SandboxLimits,
    info_fd: int,
    seccomp_fd: int,
    report_fd: int,
    hold_fd: int,
    code_fd: int,
    files_home: Path | None,
) -> list[str]:
    """Bubblewrap, our PID 1 and the interpreter, which reads the program from its standard
    input."""
    masks: list[str] = []
    for path in MASKED:
        if os.path.exists(path):
            masks += ["--ro-bind", "/dev/null", path]
    return [
        bwrap,
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--as-pid-1",
        "--info-fd",
        str(info_fd),
        "--seccomp",
        str(seccomp_fd),
        "--cap-drop",
        "ALL",
        *_root_binds(),
        "--proc",
        "/proc",
        *masks,
        *_dev(),
        *_file_system("shm", "/dev/shm", limits.shm_bytes, files_home),
        "--remount-ro",
        "/dev",
        *_file_system("work", WORK_DIR, limits.work_mb << 20, files_home),
        *_file_system("tmp", "/tmp", limits.work_mb << 20, files_home),
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
        "/bin/sh",
        "-c",
        INIT,
        "agentdash-sandbox-init",
        str(report_fd),
        str(hold_fd),
        str(code_fd),
        python,
        "-I",  # isolated: no user site, no PYTHON* variables
        "-S",  # no site-packages: the standard library only
        "-B",
        "-",  # the program from standard input
    ]
