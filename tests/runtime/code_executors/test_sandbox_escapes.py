"""The determined escapes of the outside probe, each tried for real: code that would outlive
its run, reach the worker's keys, use more than the run's limits by another route, or claim
a stop it did not meet. The run is a unit that ends as a unit (docs/SAFETY.md)."""

from __future__ import annotations

import asyncio
import ctypes
import os
import subprocess
import uuid
from collections.abc import Iterator

import pytest

from runtime.code_executors import SandboxLimits, sandbox_run
from runtime.code_executors.sandbox import processes
from tests.runtime.code_executors.sandboxing import alive_with, daemon, run

TIGHT = SandboxLimits(memory_mb=64, work_mb=256, file_mb=1024, cpu_seconds=5, wall_seconds=10)


def marker() -> str:
    return f"agentdash-escape-{uuid.uuid4().hex[:12]}"


def test_a_double_forked_daemon_is_gone_when_the_run_returns() -> None:
    name = marker()
    done = run(daemon(name))
    assert done.stdout == "parent done\n"
    assert done.stopped_by == "left_running", done
    assert alive_with(name) == []


def test_the_sandboxs_init_cannot_be_traced_nor_its_death_signal_switched_off() -> None:
    name = marker()
    probe = (
        "import ctypes, errno\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "print('ptrace', libc.ptrace(16, 1, 0, 0), errno.errorcode[ctypes.get_errno()])\n"
        "print('pdeathsig', libc.prctl(1, 0, 0, 0, 0), errno.errorcode[ctypes.get_errno()])\n"
    )
    done = run(daemon(name, then=probe))
    assert done.stdout == "ptrace -1 EPERM\npdeathsig -1 EPERM\n", done.stderr
    assert done.stopped_by == "left_running" and alive_with(name) == []


def test_the_sandboxs_pid_1_is_out_of_reach() -> None:
    """PID 1 runs a binary the sandbox may execute but not read: it is not dumpable, so its
    memory, fds and state are closed to the code (which could otherwise patch it, or forge
    its report to the supervisor)."""
    code = (
        "import os\n"
        "for path in ('/proc/1/mem', '/proc/1/task/1/mem', '/proc/1/syscall', '/proc/1/environ',"
        " '/proc/1/fd/3', '/init'):\n"
        "    try:\n"
        "        open(path, 'r+b' if path.endswith('mem') else 'rb').close(); print(path, 'open')\n"
        "    except OSError as e:\n"
        "        print(path, e.strerror)\n"
        "try:\n    print(os.listdir('/proc/1/fd'))\nexcept OSError as e:\n    print(e.strerror)\n"
        "print(sorted(os.listdir('/proc/self/fd')))"
    )
    lines = run(code).stdout.splitlines()
    assert lines[:-1] == [
        "/proc/1/mem Permission denied",
        "/proc/1/task/1/mem Permission denied",
        "/proc/1/syscall Permission denied",
        "/proc/1/environ Permission denied",
        "/proc/1/fd/3 Permission denied",
        "/init Permission denied",
        "Permission denied",
    ]
    assert lines[-1] == "['0', '1', '2', '3']"  # its three streams and listdir's own: no more


def test_the_programs_channel_is_a_pipe_the_code_cannot_turn_into_a_file() -> None:
    """The interpreter's standard input (its program) is a FIFO of the worker's: nothing on
    the host's disk to write to, and no mode the code may change."""
    code = (
        "import os, stat\n"
        "print(stat.S_ISFIFO(os.fstat(0).st_mode))\n"
        "for attempt in (lambda: os.fchmod(0, 0o666),\n"
        "                lambda: os.open('/proc/self/fd/0', os.O_WRONLY)):\n"
        "    try:\n"
        "        attempt(); print('done')\n"
        "    except OSError as e:\n"
        "        print(e.strerror)"
    )
    done = run(code)
    assert done.stdout == "True\nOperation not permitted\nPermission denied\n", done.stderr


def test_a_deep_tree_of_directories_does_not_lose_the_outcome() -> None:
    """The supervisor walks the run's files from the host after a failed run (a file at the
    size limit?): without recursion, however deep the code nests directories."""
    code = (
        "import os, sys\n"
        "for _ in range(3000):\n    os.mkdir('a'); os.chdir('a')\n"
        "print('deep'); sys.exit(3)"
    )
    done = run(code, SandboxLimits(files=5000))
    assert (done.exit_code, done.stdout, done.stopped_by) == (3, "deep\n", "")


def test_a_sparse_file_the_size_of_the_limit_is_not_a_file_size_stop() -> None:
    code = "import sys\nopen('big', 'wb').truncate(1 << 20)\nsys.exit(1)"
    done = run(code, SandboxLimits(file_mb=1))
    assert (done.exit_code, done.stopped_by) == (1, "")


def test_a_signal_to_pid_1_does_not_cut_the_run_short() -> None:
    code = (
        "import os, signal, time\n"
        "for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGHUP,"
        " signal.SIGKILL):\n"
        "    os.kill(1, sig)\n"
        "time.sleep(0.3)\nprint('still here')"
    )
    done = run(code)
    assert (done.exit_code, done.stdout, done.stopped_by) == (0, "still here\n", "")


def test_host_directories_under_usr_local_are_hidden() -> None:
    done = run("import os\nprint(os.listdir('/usr/local'))")
    assert done.stdout == "[]\n"


@pytest.mark.slow  # waits out a limit of a second, by design: over 2 s on slower machines
def test_a_run_that_keeps_its_main_process_but_closes_its_output_is_stopped() -> None:
    name = marker()
    code = (
        "import os, sys, time\n"
        "os.closerange(0, 3)\n"
        "os.execv(sys.executable,"
        f" [sys.executable, '-c', 'import time; time.sleep(600)', {name!r}])"
    )
    done = run(code, SandboxLimits(wall_seconds=1))
    assert done.stopped_by == "wall_clock" and alive_with(name) == []


@pytest.mark.slow  # two runs, and a process of the first's to find and stop: seconds
def test_a_message_left_for_a_later_run_never_arrives() -> None:
    """The first run leaves a process that keeps writing into every place a later run might
    look; the later run finds all of them empty."""
    writer = (
        "import os, socket, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    s = socket.socket(socket.AF_UNIX); s.bind('\\0agentdash-message'); s.listen()\n"
        "    while True:\n"
        "        for place in ('/work/m', '/tmp/m', '/dev/shm/m'):\n"
        "            open(place, 'w').write('hello from an earlier run')\n"
        "        time.sleep(0.05)\n"
        "time.sleep(0.3)\n"
        "print('left')"
    )
    assert run(writer).stopped_by == "left_running"
    reader = (
        "import os, socket\n"
        "print(os.listdir('/work'), os.listdir('/tmp'), os.listdir('/dev/shm'))\n"
        "try:\n"
        "    socket.socket(socket.AF_UNIX).connect('\\0agentdash-message'); print('connected')\n"
        "except OSError as e:\n"
        "    print(e.strerror)"
    )
    later = run(reader)
    assert later.stdout == "[] [] []\nConnection refused\n", later.stderr


KEY_SPEC_SESSION_KEYRING = -3
KEYCTL_REVOKE = 3


@pytest.fixture
def worker_key() -> Iterator[str]:
    """A key in this (the worker's) session keyring, readable by its possessors."""
    libc = ctypes.CDLL(None, use_errno=True)
    description = f"agentdash-worker-secret-{uuid.uuid4().hex[:8]}"
    serial = libc.syscall(
        248, b"user", description.encode(), b"s3cret", 6, KEY_SPEC_SESSION_KEYRING
    )
    assert serial > 0, os.strerror(ctypes.get_errno())
    yield description
    libc.syscall(250, KEYCTL_REVOKE, serial)


def test_the_workers_keyring_is_out_of_reach_and_nothing_can_be_planted(worker_key: str) -> None:
    code = (
        "import ctypes, errno\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "for name, args in [('describe', (250, 6, -3, 0, 0)), ('read', (250, 11, -3, 0, 0)),\n"
        "                   ('add_key', (248, b'user', b'planted', b'x', 1, -3)),\n"
        "                   ('request_key', (249, b'user', b'agentdash', 0, -3)),\n"
        "                   ('join', (250, 1, 0))]:\n"
        "    print(name, libc.syscall(*args), errno.errorcode[ctypes.get_errno()])\n"
        "try:\n"
        "    print(open('/proc/keys').read())\n"
        "except OSError as e:\n"
        "    print('/proc/keys', e.strerror)"
    )
    done = run(code)
    assert done.stdout.splitlines() == [
        "describe -1 EPERM",
        "read -1 EPERM",
        "add_key -1 EPERM",
        "request_key -1 EPERM",
        "join -1 EPERM",
        "/proc/keys Permission denied",
    ]
    assert worker_key not in done.stdout + done.stderr


def test_sandboxes_start_with_an_empty_session_keyring_of_their_own(worker_key: str) -> None:
    """The starter thread's children possess none of the worker's keys; a child of the
    worker's own thread does (the control: the check can see the key)."""

    def keys_seen(argv: list[str]) -> str:
        async def start() -> str:
            child = await processes.spawn(argv, stdin=subprocess.DEVNULL, pass_fds=(), user=65534)
            out = child.stdout.read().decode()
            processes.reap(child.pidfd, block=True)
            child.popen.returncode = 0
            os.close(child.pidfd)
            child.stdout.close()
            child.stderr.close()
            return out

        return asyncio.run(start())

    started = keys_seen(["/bin/cat", "/proc/keys"])
    control = subprocess.run(["cat", "/proc/keys"], capture_output=True, text=True, user=65534)
    assert worker_key in control.stdout
    assert worker_key not in started


def filler(target: str) -> str:
    return (
        f"f = open({target!r}, 'wb')\nchunk = b'x' * (1 << 20)\n"
        "for _ in range(200):\n    f.write(chunk); f.flush()\nprint('wrote 200 MiB')"
    )


MEMORY_ROUTES = {
    "work tmpfs": filler("/work/fill"),
    "tmp tmpfs": filler("/tmp/fill"),
    "/dev/shm": filler("/dev/shm/fill"),
    "memfd": (
        "import os\nfd = os.memfd_create('fill')\nchunk = b'x' * (1 << 20)\n"
        "for _ in range(200):\n    os.write(fd, chunk)\nprint('wrote 200 MiB')"
    ),
    "SysV shm": (
        "import ctypes\nlibc = ctypes.CDLL(None)\nlibc.shmat.restype = ctypes.c_void_p\n"
        "seg = libc.shmget(0, 200 << 20, 0o1600)\naddr = libc.shmat(seg, None, 0)\n"
        "ctypes.memset(addr, 1, 200 << 20)\nprint('filled 200 MiB')"
    ),
    "many processes": (
        "import os, time\nkids = []\nfor _ in range(12):\n    pid = os.fork()\n"
        "    if pid == 0:\n        held = b'y' * (20 << 20)\n        time.sleep(5)\n"
        "        os._exit(0)\n    kids.append(pid)\nfor pid in kids:\n    os.waitpid(pid, 0)\n"
        "print('all twelve held 20 MiB')"
    ),
    "kernel objects (200k empty files)": (
        "for i in range(200_000):\n    open(f'/work/f{i}', 'w').close()\nprint('made them')"
    ),
}


# Making 200k files until the memory limit stops it takes 1.5–2.5 s of its own: slow.
ROUTE_PARAMS = [
    pytest.param(route, marks=pytest.mark.slow) if "kernel" in route else route
    for route in MEMORY_ROUTES
]


@pytest.mark.parametrize("route", ROUTE_PARAMS)
def test_each_memory_route_is_stopped_at_the_runs_limit(route: str) -> None:
    limits = TIGHT if "kernel" not in route else SandboxLimits(memory_mb=64, files=1_000_000)
    done = run(MEMORY_ROUTES[route], limits)
    assert done.stopped_by == "memory", (route, done)
    assert done.stdout == "" and done.usage["memory_peak_mb"] <= 64


def test_no_nested_user_namespace_and_no_mount() -> None:
    """The route to a tmpfs of one's own (a new user and mount namespace) is closed."""
    code = (
        "import ctypes, errno\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "print(libc.unshare(0x10000000 | 0x20000), errno.errorcode[ctypes.get_errno()])\n"
        "print(libc.mount(b'none', b'/tmp', b'tmpfs', 0, None),"
        " errno.errorcode[ctypes.get_errno()])\n"
        "import subprocess\n"
        "print(subprocess.run(['unshare', '-Ur', 'true']).returncode != 0)"
    )
    done = run(code)
    assert done.stdout == "-1 EPERM\n-1 EPERM\nTrue\n", done.stderr


@pytest.mark.slow  # waits out a limit of a second, by design: over 2 s on slower machines
def test_cpu_time_is_the_runs_across_many_processes() -> None:
    busy = (
        "import os\nfor _ in range(8):\n    if os.fork() == 0:\n        while True:\n"
        "            pass\nwhile True:\n    pass"
    )
    done = run(busy, SandboxLimits(cpu_seconds=1, cpus=2, wall_seconds=10))
    assert done.stopped_by == "cpu_time"
    assert 1000 <= done.usage["cpu_ms"] < 1500


@pytest.mark.slow  # a process (or twenty) of its own: seconds
def test_the_cpu_share_holds_many_busy_processes_to_it() -> None:
    busy = "import os\nfor _ in range(4):\n    os.fork()\nwhile True:\n    pass"
    done = run(busy, SandboxLimits(cpus=0.25, cpu_seconds=30, wall_seconds=2))
    assert done.stopped_by == "wall_clock"
    assert done.usage["cpu_ms"] < 0.25 * 2000 * 1.5


@pytest.mark.parametrize("where", ["/work", "/tmp", "/dev/shm"])
def test_an_inode_flood_is_stopped_at_the_file_count(where: str) -> None:
    code = (
        "made = 0\ntry:\n    while True:\n"
        f"        open(f'{where}/f{{made}}', 'w').close(); made += 1\n"
        "finally:\n    print(made)"
    )
    done = run(code, SandboxLimits(files=500))
    assert done.stopped_by == "disk" and "No space left" in done.stderr
    assert int(done.stdout) < 500


FAKES = {
    "a MemoryError traceback": (
        "import sys\nprint('Traceback (most recent call last):\\nMemoryError', file=sys.stderr)\n"
        "sys.exit(1)",
        1,
    ),
    "exit 137": ("import sys\nsys.exit(137)", 137),
    "its own SIGKILL": ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", 137),
    "its own SIGXCPU": ("import os, signal\nos.kill(os.getpid(), signal.SIGXCPU)", 128 + 24),
    "a fork refusal": (
        'import sys\nprint("BlockingIOError: [Errno 11] Resource temporarily unavailable",'
        " file=sys.stderr)\nsys.exit(1)",
        1,
    ),
    "a full disk": (
        'import sys\nprint("OSError: [Errno 28] No space left on device", file=sys.stderr)\n'
        "sys.exit(1)",
        1,
    ),
}


@pytest.mark.parametrize("claim", FAKES)
def test_a_stop_the_code_only_claims_is_not_reported(claim: str) -> None:
    code, status = FAKES[claim]
    done = run(code)
    assert (done.stopped_by, done.exit_code) == ("", status), done


def test_the_kill_path_never_signals_a_process_outside_the_run() -> None:
    """A PID read from the run's cgroup that names another process by the time it is
    signalled (reused) is left alone: the membership is checked on the pidfd's process."""
    from runtime.code_executors.sandbox.cgroups import member_of, own_cgroups, signal_members

    bystander = subprocess.Popen(["sleep", "30"])
    try:
        path = own_cgroups(bystander.pid)["pids"] + "/agentdash-sandbox/slot-0"
        assert signal_members([bystander.pid], "pids", path) == 0
        assert bystander.poll() is None
        assert member_of(bystander.pid, "pids", own_cgroups(bystander.pid)["pids"])
    finally:
        bystander.kill()
        bystander.wait()


@pytest.mark.slow  # a process (or twenty) of its own: seconds
def test_twenty_runs_at_once_keep_to_their_own_limits_and_see_nothing_of_each_other() -> None:
    normal = (
        "import os, ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "held = b'z' * (40 << 20)\n"
        "fd = libc.inotify_init1(0)\n"
        "pid = os.fork()\n"
        "if pid == 0:\n    os._exit(0)\n"
        "os.waitpid(pid, 0)\n"
        "open('/work/mine', 'w').write(str(os.getuid()))\n"
        "print(os.getuid(), fd > 0, sorted(os.listdir('/work')), sorted(os.listdir('/tmp')))"
    )
    quota_hog = (
        "import ctypes\nlibc = ctypes.CDLL(None)\nmade = 0\n"
        "while libc.inotify_init1(0) >= 0:\n    made += 1\nprint(made)"
    )
    fork_bomb = "import os\nwhile True:\n    os.fork()"
    limits = SandboxLimits(memory_mb=64, open_files=1024, wall_seconds=30)

    async def together() -> list:
        codes = [normal] * 18 + [quota_hog, fork_bomb]
        return await asyncio.gather(*(sandbox_run(code, limits) for code in codes))

    *normals, hog, bomb = asyncio.run(together())
    uids = set()
    for done in normals:
        assert done.exit_code == 0 and done.stopped_by == "", done
        uid, rest = done.stdout.split(" ", 1)
        assert rest == "True ['mine'] []\n"  # its inotify, its fork, its files only
        uids.add(uid)
    assert len(uids) == 18  # a user of its own each
    assert 0 < int(hog.stdout) <= 1024 and hog.exit_code == 0
    assert bomb.stopped_by == "processes"
