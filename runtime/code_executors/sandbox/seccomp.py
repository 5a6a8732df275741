"""The sandbox's system-call filter: what a Python snippet never needs is denied.

A deny list over the native architecture, compiled once per process to a classic BPF program
by libseccomp (Debian's ``libseccomp2``, through ``ctypes``) and handed to bubblewrap, which
loads it into the sandbox's process (``--seccomp``) right before the interpreter starts;
every process the code starts inherits it and none can remove it. A call of another
architecture (32-bit ``int 0x80`` on x86_64, x32) kills the process.

Denied calls fail with ``EPERM`` (``ENOSYS`` where a caller is expected to fall back, such as
``clone3`` to ``clone``, whose flags are checked). A system call this policy does not know —
one libseccomp cannot name on this architecture, or one numbered above
:data:`NEWEST_REVIEWED` — answers ``ENOSYS`` as an older kernel would: a call added to Linux
later is denied until someone reviews it. (x86_64's ``uretprobe`` and ``uprobe`` are the
kernel's own exception: it passes them by every filter since Linux 6.12 and 6.16; called
from anywhere but its uprobe trampolines they only fail, with SIGILL and ENXIO.)
Sockets are Unix only: the sandbox has no network, and IP sockets on its own loopback would
reach the kernel's TCP and UDP stacks, whose buffers cgroup v1 does not charge to the run.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
from dataclasses import dataclass
from functools import lru_cache

__all__ = [
    "DENIED",
    "NEWEST_REVIEWED",
    "NOT_IMPLEMENTED",
    "SeccompFilter",
    "SeccompUnavailableError",
    "seccomp_filter",
    "syscall_number",
]

# What each denied call would give the code, by what it is for.
DENIED: dict[str, tuple[str, ...]] = {
    "other processes' memory": (
        "ptrace",
        "process_vm_readv",
        "process_vm_writev",
        "process_madvise",
        "pidfd_getfd",
        "kcmp",
    ),
    "namespaces": ("unshare", "setns"),
    "kernel keyrings": ("keyctl", "add_key", "request_key"),
    "mounts and roots": (
        "mount",
        "umount2",
        "umount",
        "pivot_root",
        "chroot",
        "move_mount",
        "open_tree",
        "fsopen",
        "fsconfig",
        "fsmount",
        "fspick",
        "mount_setattr",
    ),
    "kernel programs and tracing": (
        "bpf",
        "perf_event_open",
        "userfaultfd",
        "fanotify_init",
        "lookup_dcookie",
    ),
    "the machine itself": (
        "init_module",
        "finit_module",
        "delete_module",
        "kexec_load",
        "kexec_file_load",
        "reboot",
        "swapon",
        "swapoff",
        "acct",
        "quotactl",
        "quotactl_fd",
        "syslog",
        "settimeofday",
        "clock_settime",
        "clock_adjtime",
        "adjtimex",
        "stime",
    ),
    "files by handle": ("open_by_handle_at", "name_to_handle_at"),
    "hardware and legacy": (
        "iopl",
        "ioperm",
        "modify_ldt",
        "vhangup",
        "uselib",
        "ustat",
        "sysfs",
        "_sysctl",
        "nfsservctl",
        "personality",
    ),
    "memory placement": (
        "mbind",
        "migrate_pages",
        "move_pages",
        "set_mempolicy",
        "set_mempolicy_home_node",
    ),
}
# Denied with ENOSYS: callers fall back (glibc's clone3 → clone), or the kernel's shared
# asynchronous I/O tables (io_uring; the old AIO's system-wide aio-max-nr) stay out of reach.
NOT_IMPLEMENTED: tuple[str, ...] = (
    "clone3",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "io_setup",
    "io_submit",
    "io_destroy",
    "io_getevents",
    "io_pgetevents",
    "io_cancel",
)
# x86_64 and arm64 number every call added since Linux 5.1 alike (424 on): mseal (462,
# Linux 6.10) is the newest this policy was reviewed against; newer ones answer ENOSYS, as
# do numbers below it that libseccomp cannot name (calls newer than its table).
NEWEST_REVIEWED = 462
_NUMBERS_UP_TO = 600

_CLONE_NEW = {
    "CLONE_NEWTIME": 0x00000080,
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
_AF_UNIX = 1
_TIOCSTI, _TIOCLINUX = 0x5412, 0x541C  # push input into a terminal; the console's ioctl
_PR_SET_PDEATHSIG, _PR_SET_MM = 1, 35  # the parent-death signal stays as bubblewrap set it

_ACT_ALLOW = 0x7FFF0000
_ACT_KILL_PROCESS = 0x80000000
_ATTR_ACT_BADARCH = 2
_ATTR_OPTIMIZE = 8
_CMP_NE, _CMP_MASKED_EQ = 1, 7


def _errno(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


class SeccompUnavailableError(RuntimeError):
    """libseccomp cannot be loaded or refused the policy."""


class _ArgCmp(ctypes.Structure):
    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


class _Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint), ("minor", ctypes.c_uint), ("micro", ctypes.c_uint)]


@dataclass(frozen=True)
class SeccompFilter:
    """The compiled filter: ``program`` is the BPF bubblewrap loads; ``missing`` names denied
    calls this architecture does not have (nothing to deny)."""

    program: bytes
    version: str
    missing: tuple[str, ...]


@lru_cache(maxsize=1)
def _lib() -> ctypes.CDLL:
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError as exc:
        raise SeccompUnavailableError(
            "libseccomp is not installed: the sandbox's system-call filter needs it "
            "(Debian: libseccomp2; scripts/sandbox.sh installs it)"
        ) from exc
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_ArgCmp),
    ]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.seccomp_syscall_resolve_num_arch.argtypes = [ctypes.c_uint32, ctypes.c_int]
    lib.seccomp_syscall_resolve_num_arch.restype = ctypes.c_void_p
    lib.seccomp_version.restype = ctypes.POINTER(_Version)
    return lib


def syscall_number(name: str) -> int | None:
    """The native number of system call ``name``; ``None`` where this architecture lacks it."""
    number = int(_lib().seccomp_syscall_resolve_name(name.encode()))
    return number if number >= 0 else None


def _name_of(number: int) -> str | None:
    """libseccomp's name for native call ``number``; ``None`` where it knows none."""
    found = _lib().seccomp_syscall_resolve_num_arch(0, number)  # 0: the native architecture
    if not found:
        return None
    try:
        return ctypes.string_at(found).decode()
    finally:
        ctypes.CDLL(None).free(ctypes.c_void_p(found))


def _add(ctx: int, action: int, number: int, *compare: tuple[int, int, int, int]) -> None:
    args = (_ArgCmp * max(len(compare), 1))(*(_ArgCmp(*c) for c in compare))
    result = _lib().seccomp_rule_add_array(ctx, action, number, len(compare), args)
    if result < 0:
        raise SeccompUnavailableError(f"libseccomp refused a rule for call {number}: {-result}")


def _rules(ctx: int) -> list[str]:
    missing: list[str] = []

    def each(names: tuple[str, ...], action: int) -> None:
        for name in names:
            number = syscall_number(name)
            if number is None:
                missing.append(name)
            else:
                _add(ctx, action, number)

    for names in DENIED.values():
        each(names, _errno(errno.EPERM))
    each(NOT_IMPLEMENTED, _errno(errno.ENOSYS))
    clone = syscall_number("clone")
    if clone is not None:
        for flag in _CLONE_NEW.values():  # no new namespace of any kind, user ones above all
            _add(ctx, _errno(errno.EPERM), clone, (0, _CMP_MASKED_EQ, flag, flag))
    for name in ("socket", "socketpair"):  # Unix only: no IP, netlink (nf_tables), packet…
        number = syscall_number(name)
        if number is not None:
            _add(ctx, _errno(errno.EAFNOSUPPORT), number, (0, _CMP_NE, _AF_UNIX, 0))
    ioctl = syscall_number("ioctl")
    if ioctl is not None:
        for request in (_TIOCSTI, _TIOCLINUX):
            _add(ctx, _errno(errno.EPERM), ioctl, (1, _CMP_MASKED_EQ, 0xFFFFFFFF, request))
    prctl = syscall_number("prctl")
    if prctl is not None:
        for option in (_PR_SET_PDEATHSIG, _PR_SET_MM):
            # The kernel reads the option as an int: compare the low 32 bits only.
            _add(ctx, _errno(errno.EPERM), prctl, (0, _CMP_MASKED_EQ, 0xFFFFFFFF, option))
    for number in range(_NUMBERS_UP_TO):
        if number > NEWEST_REVIEWED or _name_of(number) is None:
            _add(ctx, _errno(errno.ENOSYS), number)
    return missing


@lru_cache(maxsize=1)
def seccomp_filter() -> SeccompFilter:
    """Compile the policy (once per process). Raises :class:`SeccompUnavailableError`."""
    lib = _lib()
    ctx = lib.seccomp_init(_ACT_ALLOW)
    if not ctx:
        raise SeccompUnavailableError("libseccomp could not make a filter")
    try:
        if lib.seccomp_attr_set(ctx, _ATTR_ACT_BADARCH, _ACT_KILL_PROCESS) < 0:
            raise SeccompUnavailableError("libseccomp refused the other-architecture action")
        # A binary tree of the numbers rather than a list: a few comparisons per call.
        lib.seccomp_attr_set(ctx, _ATTR_OPTIMIZE, 2)
        missing = _rules(ctx)
        fd = os.memfd_create("agentdash-seccomp", os.MFD_CLOEXEC)
        try:
            if lib.seccomp_export_bpf(ctx, fd) < 0:
                raise SeccompUnavailableError("libseccomp could not export the filter")
            os.lseek(fd, 0, os.SEEK_SET)
            program = b"".join(iter(lambda: os.read(fd, 65536), b""))
        finally:
            os.close(fd)
    finally:
        lib.seccomp_release(ctx)
    found = lib.seccomp_version().contents
    version = f"libseccomp {found.major}.{found.minor}.{found.micro}"
    return SeccompFilter(program=program, version=version, missing=tuple(missing))
