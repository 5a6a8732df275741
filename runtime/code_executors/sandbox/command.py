"""The command line of one sandbox: a gate, then bubblewrap, then our PID 1 and the
interpreter.

The gate (``/bin/sh``) waits on its standard input until the supervisor has put it into the
run's cgroup, then opens the run's three channels at fds 3, 4 and 5 (the *report*, *hold*
and *code* FIFOs in the slot's directory on the host, which the sandbox never sees;
:mod:`.channels`) and becomes bubblewrap: nothing of the sandbox exists before the process
is in its cgroup. Bubblewrap then makes, in new user, mount, PID, network, IPC, UTS and
cgroup namespaces:

- a root that is an empty read-only tmpfs with the system's ``/usr`` (and its ``/bin``,
  ``/lib`` links) bound read-only, ``/usr/local`` hidden: no ``/etc``, no home, not the
  project;
- ``/work`` and ``/tmp`` (and ``/dev/shm``), tmpfs of the run's own size;
- a minimal, read-only ``/dev`` (null, zero, full, random, urandom; no terminal);
- ``/proc`` of its own PID namespace, with the kernel's keys, command line and a few more
  masked;
- no further user namespaces (``--disable-userns``), no capabilities, a new session, the
  system-call filter (:mod:`.seccomp`) loaded before anything of the sandbox runs.

The namespace's PID 1 is a shell of ours (:data:`INIT`, ``--as-pid-1``), a copy of
``/bin/sh`` the sandbox may execute but not read, which makes it undumpable: the code can
neither read nor patch its memory nor reach its fds through ``/proc/1``. When it exits, the
kernel kills everything else in the namespace, and bubblewrap kills it should the worker
die. It runs the interpreter as its child with fds 3-5 closed; when that ends it tells the
supervisor (*report*) and waits for its word (*hold*) before it exits. Meanwhile the
supervisor looks into the run's cgroup: any process other than bubblewrap and this shell was
left running by the code, and the run is stopped (``left_running``).
"""

from __future__ import annotations

import os
from pathlib import Path

from runtime.code_executors.sandbox.limits import SandboxLimits

__all__ = ["CHANNELS", "GATE", "INIT", "WORK_DIR", "bwrap_command", "gate_command"]

WORK_DIR = "/work"
INIT_PATH = "/init"
CHANNELS = ("report", "hold", "code")  # FIFOs in the slot's directory, at fds 3, 4, 5
# Standard input is the gate: one line "go" (nothing, EOF, anything else: do not start).
# $1 is the slot's directory.
GATE = (
    'read -r go && [ "$go" = go ] || exit 125; '
    'exec 3>"$1/report" 4<"$1/hold" 5<"$1/code" || exit 125; shift; exec "$@"'
)
# The interpreter runs in the background (its stdin the program), waited for with the shell's
# own complaints sent nowhere (sh would write "Killed" into the code's stderr); SIGINT and
# SIGQUIT, which the shell would otherwise catch, cannot cut the wait short.
INIT = (
    "trap '' INT QUIT; "
    '"$@" <&5 3>&- 4>&- 5>&- & wait "$!" 2>/dev/null; status=$?; exec 5>&-; '
    'echo "$status" >&3; read -r _ <&4; exit "$status"'
)
DEVICES = ("null", "zero", "full", "random", "urandom")
MASKED = (
    "/proc/keys",
    "/proc/key-users",
    "/proc/sysrq-trigger",
    "/proc/kcore",
    "/proc/cmdline",
    "/proc/timer_list",
    "/proc/sched_debug",
)


def gate_command(slot_home: Path, command: list[str]) -> list[str]:
    return ["/bin/sh", "-c", GATE, "agentdash-sandbox-gate", str(slot_home), *command]


def _root_binds(empty: Path) -> list[str]:
    """/usr read-only but for /usr/local (hosts keep their own configuration there), and
    /bin, /lib, /lib64, /sbin as the host has them (links or dirs)."""
    args = ["--ro-bind", "/usr", "/usr"]
    if os.path.isdir("/usr/local"):
        args += ["--ro-bind", str(empty), "/usr/local"]
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


def _isolation(info_fd: int, seccomp_fd: int) -> list[str]:
    """Every namespace new, no user namespace inside, no capabilities, the seccomp filter;
    bwrap dies with its parent and tells its child's pid on ``info_fd``."""
    return [
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
    ]


def _environment() -> list[str]:
    """The program's place and variables: the work folder, a fixed host name, an
    environment of three variables."""
    return [
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
    ]


def bwrap_command(
    *,
    bwrap: str,
    python: str,
    init: Path,
    empty: Path,
    limits: SandboxLimits,
    info_fd: int,
    seccomp_fd: int,
    files_home: Path | None,
) -> list[str]:
    """Bubblewrap, our PID 1 (``init``: an execute-only copy of sh) and the interpreter,
    which reads the program from its standard input."""
    masks: list[str] = []
    for path in MASKED:
        if os.path.exists(path):
            masks += ["--ro-bind", "/dev/null", path]
    return [
        bwrap,
        *_isolation(info_fd, seccomp_fd),
        *_root_binds(empty),
        "--ro-bind",
        str(init),
        INIT_PATH,
        "--proc",
        "/proc",
        *masks,
        *_dev(),
        *_file_system("shm", "/dev/shm", limits.shm_bytes, files_home),
        "--remount-ro",
        "/dev",
        *_file_system("work", WORK_DIR, limits.work_mb << 20, files_home),
        *_file_system("tmp", "/tmp", limits.work_mb << 20, files_home),
        *_environment(),
        "--remount-ro",
        "/",
        INIT_PATH,
        "-c",
        INIT,
        "agentdash-sandbox-init",
        python,
        "-I",  # isolated: no user site, no PYTHON* variables
        "-S",  # no site-packages: the standard library only
        "-B",
        "-",  # the program from standard input
    ]
