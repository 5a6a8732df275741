"""The few system calls the supervisor makes that Python's ``os`` does not wrap: mounting a
tmpfs, unmounting it, and joining a new session keyring. Linux only."""

from __future__ import annotations

import ctypes
import os
from functools import lru_cache

__all__ = ["MNT_DETACH", "MS_NODEV", "MS_NOSUID", "join_new_session_keyring", "mount", "umount"]

MS_NOSUID = 0x2
MS_NODEV = 0x4
MNT_DETACH = 0x2
KEYCTL_JOIN_SESSION_KEYRING = 1
# keyctl(2)'s number where it differs from the generic table (x86_64); arm64, riscv64 and the
# other architectures of the generic table use 219.
_KEYCTL = {"x86_64": 250, "i686": 288, "i386": 288}


@lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> int:
    if result < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")
    return result


def mount(source: str, target: str, fstype: str, flags: int, data: str) -> None:
    """mount(2); raises ``OSError`` with the reason."""
    libc = _libc()
    libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]
    _check(
        libc.mount(source.encode(), target.encode(), fstype.encode(), flags, data.encode()),
        f"mount {fstype} on {target}",
    )


def umount(target: str, flags: int = MNT_DETACH) -> bool:
    """umount2(2); ``False`` when nothing is mounted there (``EINVAL``) or it is gone."""
    libc = _libc()
    libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
    if libc.umount2(target.encode(), flags) == 0:
        return True
    errno = ctypes.get_errno()
    if errno in (22, 2):  # EINVAL: not a mount point; ENOENT: no such path
        return False
    raise OSError(errno, f"umount {target}: {os.strerror(errno)}")


def join_new_session_keyring() -> int:
    """Give the *calling thread* a new, empty, anonymous session keyring (credentials are per
    thread on Linux): the processes it starts inherit that keyring, not the process's own.
    Returns the keyring's serial; raises ``OSError`` where the kernel has no keyrings."""
    number = _KEYCTL.get(os.uname().machine, 219)
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    return _check(
        libc.syscall(ctypes.c_long(number), ctypes.c_long(KEYCTL_JOIN_SESSION_KEYRING), None),
        "keyctl(JOIN_SESSION_KEYRING)",
    )
