"""The system-call filter, inside a real sandbox: every call the policy denies fails with its
errno, the calls it checks by argument are refused only for what they are checked for, and
what Python needs goes through."""

from __future__ import annotations

import json

from runtime.code_executors.sandbox.seccomp import (
    DENIED,
    NEWEST_REVIEWED,
    NOT_IMPLEMENTED,
    seccomp_filter,
    syscall_number,
)
from tests.runtime.code_executors.sandboxing import run

CALL_ALL = """
import ctypes, json
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
found = {}
for name, number in NUMBERS.items():
    ctypes.set_errno(0)
    result = libc.syscall(ctypes.c_long(number), 0, 0, 0, 0, 0, 0)
    found[name] = [result, ctypes.get_errno()]
print(json.dumps(found))
"""


def call_each(numbers: dict[str, int]) -> dict[str, list[int]]:
    done = run(f"NUMBERS = {numbers!r}\n{CALL_ALL}")
    assert done.exit_code == 0, done.stderr
    return json.loads(done.stdout)


def test_every_denied_call_fails_with_eperm_inside() -> None:
    names = [name for group in DENIED.values() for name in group]
    numbers = {name: n for name in names if (n := syscall_number(name)) is not None}
    assert set(names) - set(numbers) == set(seccomp_filter().missing)
    # Each is called with zero arguments, which the kernel alone would mostly answer with
    # EINVAL, EFAULT or EBADF: EPERM is the filter's answer.
    assert {name: found for name, found in call_each(numbers).items() if found != [-1, 1]} == {}


def test_calls_with_a_fallback_and_unreviewed_numbers_answer_enosys() -> None:
    numbers = {name: syscall_number(name) for name in NOT_IMPLEMENTED}
    numbers |= {"newer than the policy": NEWEST_REVIEWED + 1, "far newer": NEWEST_REVIEWED + 40}
    found = call_each({k: v for k, v in numbers.items() if v is not None})
    assert {name: result for name, result in found.items() if result != [-1, 38]} == {}


def test_argument_checks_refuse_only_what_they_check() -> None:
    code = """
import ctypes, errno, os, socket, threading
libc = ctypes.CDLL(None, use_errno=True)
def err(result):
    return errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno())) if result < 0 else "ok"
# clone(2) with any CLONE_NEW* flag; a plain fork and a thread still work
clone = 56 if os.uname().machine == "x86_64" else 220
print("clone newuser", err(libc.syscall(clone, 0x10000000 | 17, 0, 0, 0, 0)))
pid = os.fork()
if pid == 0:
    os._exit(7)
print("fork", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
t = threading.Thread(target=lambda: None); t.start(); t.join(); print("thread ok")
for family, kind in [(socket.AF_NETLINK, socket.SOCK_RAW), (socket.AF_PACKET, socket.SOCK_RAW),
                     (38, socket.SOCK_SEQPACKET), (socket.AF_UNIX, socket.SOCK_STREAM),
                     (socket.AF_INET, socket.SOCK_STREAM), (socket.AF_INET6, socket.SOCK_DGRAM)]:
    try:
        socket.socket(family, kind).close(); print("socket", family, "ok")
    except OSError as e:
        print("socket", family, errno.errorcode[e.errno])
a, b = socket.socketpair(); print("socketpair unix ok")
print("socketpair inet", err(libc.socketpair(2, 1, 0, (ctypes.c_int * 2)())))
print("TIOCSTI", err(libc.ioctl(1, 0x5412, ctypes.c_char_p(b"x"))))
print("pdeathsig", err(libc.prctl(1, 0, 0, 0, 0)), "name", err(libc.prctl(15, b"renamed", 0, 0, 0)))
print("personality", err(libc.personality(0x0040000)))
"""
    done = run(code)
    assert done.stdout.splitlines() == [
        "clone newuser EPERM",
        "fork 7",
        "thread ok",
        "socket 16 EAFNOSUPPORT",
        "socket 17 EAFNOSUPPORT",
        "socket 38 EAFNOSUPPORT",
        "socket 1 ok",
        "socket 2 EAFNOSUPPORT",
        "socket 10 EAFNOSUPPORT",
        "socketpair unix ok",
        "socketpair inet EAFNOSUPPORT",
        "TIOCSTI EPERM",
        "pdeathsig EPERM name ok",
        "personality EPERM",
    ], done.stderr


def test_the_filter_is_compiled_once_for_this_architecture() -> None:
    found = seccomp_filter()
    assert found is seccomp_filter()
    assert found.version.startswith("libseccomp 2.")
    assert len(found.program) % 8 == 0 and len(found.program) // 8 < 4096  # BPF's own bound
    legacy = {"umount", "stime", "_sysctl", "uselib", "ustat", "sysfs", "nfsservctl", "iopl",
              "ioperm", "modify_ldt", "vhangup"}  # fmt: skip
    assert set(found.missing) <= legacy


def test_the_option_of_prctl_is_compared_as_the_kernel_reads_it() -> None:
    """prctl's option is an int: high bits set beside PR_SET_PDEATHSIG change nothing for the
    kernel, so nothing for the filter either."""
    number = syscall_number("prctl")
    code = (
        "import ctypes, errno\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        f"r = libc.syscall({number}, ctypes.c_ulong((1 << 32) | 1), 15, 0, 0, 0)\n"
        "print(r, errno.errorcode[ctypes.get_errno()])\n"
        "out = ctypes.c_int(-1)\n"
        f"libc.syscall({number}, 2, ctypes.byref(out), 0, 0, 0)\n"
        "print(out.value)"
    )
    done = run(code)
    assert done.stdout == "-1 EPERM\n0\n", done.stderr  # not SIGTERM (15): refused


def test_a_call_libseccomp_cannot_name_answers_enosys() -> None:
    from runtime.code_executors.sandbox.seccomp import _name_of

    unnamed = [n for n in range(424, NEWEST_REVIEWED + 1) if _name_of(n) is None]
    named = syscall_number("getppid")
    assert named is not None
    found = call_each({"getppid": named, **{f"unnamed {n}": n for n in unnamed[:5]}})
    assert found.pop("getppid") == [1, 0]  # allowed: the interpreter's parent is PID 1
    assert {name: result for name, result in found.items() if result != [-1, 38]} == {}
