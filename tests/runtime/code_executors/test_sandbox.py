"""The sandbox for real (bubblewrap, scripts/sandbox.sh installs it): plain code runs, every
way out that model-written code might try fails, and what stopped a run comes from the
supervisor's evidence. The determined escapes of the outside probe: test_sandbox_escapes.py."""

from __future__ import annotations

import os
import socket
import sys
import threading
from collections.abc import Iterator

import pytest

from runtime.code_executors import SandboxLimits, sandbox_check
from runtime.code_executors.sandbox import sandbox_containment
from tests.runtime.code_executors.sandboxing import FAST, ROOT, last_line, run


def test_the_sandbox_is_there_and_each_run_has_a_cgroup() -> None:
    """CI installs bubblewrap and libseccomp (scripts/sandbox.sh) and runs as root on cgroup
    v1 or v2: their absence fails here, never skips."""
    found = sandbox_check()
    assert found.startswith("bubblewrap") and "seccomp (libseccomp" in found
    assert sandbox_containment() in ("cgroup v1", "cgroup v2")


def test_plain_code_runs_and_prints() -> None:
    done = run("import statistics\nprint(statistics.mean([2, 4, 9]))")
    assert (done.exit_code, done.stdout, done.stderr, done.stopped_by) == (0, "5\n", "", "")
    assert done.containment == sandbox_containment()
    assert done.usage["cpu_ms"] > 0 and 0 < done.usage["memory_peak_mb"] <= FAST.memory_mb


def test_threads_processes_and_files_work_inside() -> None:
    code = (
        "import concurrent.futures, subprocess, sys, os\n"
        "with concurrent.futures.ThreadPoolExecutor(4) as pool:\n"
        "    print(sum(pool.map(lambda n: n * n, range(10))))\n"
        "print(subprocess.run([sys.executable, '-c', 'print(6 * 7)'], capture_output=True,"
        " text=True).stdout.strip())\n"
        "open('/tmp/a', 'w').write('t'); open('/dev/shm/b', 'w').write('s')\n"
        "print(open('/tmp/a').read() + open('/dev/shm/b').read(), os.getcwd())"
    )
    done = run(code)
    assert (done.exit_code, done.stdout) == (0, "285\n42\nts /work\n"), done.stderr


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP server on the host's 127.0.0.1 that records whoever connects."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    seen: list[object] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                seen.append(server.accept())
            except TimeoutError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()
    assert seen == [], "the sandbox reached the host's listener"


def test_no_network_not_even_the_hosts_loopback(listener: int) -> None:
    """No IP socket can even be made (Unix sockets only). The refusal is the code's own
    error, not a limit: it exits with its status and its traceback, and no ``stopped_by``
    (nothing the code prints is evidence)."""
    for address in (f"('127.0.0.1', {listener})", "('1.1.1.1', 53)", "('::1', 80)"):
        done = run(f"import socket\nsocket.create_connection({address}, timeout=2)")
        assert (done.exit_code, done.stopped_by) == (1, "")
        assert "Address family not supported" in last_line(done.stderr)
    local = run(
        "import socket\na, b = socket.socketpair()\na.sendall(b'unix works')\n"
        "print(b.recv(64).decode())"
    )
    assert local.stdout == "unix works\n"


@pytest.mark.parametrize(
    "path",
    [str(ROOT / "README.md"), str(ROOT / "agentdash" / "settings" / "__init__.py"), "/etc/shadow",
     "/etc/passwd", "/root/.bash_history", "/proc/keys", "/proc/key-users"],
)  # fmt: skip
def test_no_project_file_and_no_host_secret_can_be_read(path: str) -> None:
    done = run(f"print(open({path!r}, 'rb').read()[:200])")
    assert (done.exit_code, done.stdout, done.stopped_by) == (1, "", "")
    assert "Error" in last_line(done.stderr)


def test_the_environment_keeps_no_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTDASH_TEST_SECRET", "s3cr3t-value")
    done = run(
        "import os\nprint(sorted(os.environ))\n"
        "for pid in [p for p in os.listdir('/proc') if p.isdigit()]:\n"
        "    try:\n"
        "        print(open(f'/proc/{pid}/environ').read())\n"
        "    except PermissionError:\n"
        "        print(pid, 'not readable')"
    )
    assert done.exit_code == 0
    assert "s3cr3t" not in done.stdout and "AGENTDASH" not in done.stdout
    assert set(eval(done.stdout.splitlines()[0])) <= {"HOME", "LANG", "PATH", "PWD"}
    assert "1 not readable" in done.stdout  # the sandbox's PID 1: not dumpable


def test_a_fork_bomb_is_stopped_at_the_process_limit() -> None:
    done = run("import os\nwhile True:\n    os.fork()")
    assert done.stopped_by == "processes" and done.exit_code != 0
    assert done.usage["refused_forks"] >= 1


def test_a_memory_hog_is_stopped_at_the_memory_limit() -> None:
    done = run("hog = bytearray(1 << 30)")
    assert done.stopped_by == "memory" and done.exit_code != 0
    assert done.usage["oom_kills"] >= 1 and done.usage["memory_peak_mb"] <= FAST.memory_mb


@pytest.mark.slow  # waits out a limit of a second, by design: over 2 s on slower machines
def test_an_endless_loop_is_stopped_at_the_cpu_limit() -> None:
    done = run("while True:\n    pass", SandboxLimits(cpu_seconds=1, wall_seconds=10))
    assert done.stopped_by == "cpu_time" and done.exit_code != 0
    assert 1000 <= done.usage["cpu_ms"] < 1500


@pytest.mark.slow  # waits out a limit of a second, by design: over 2 s on slower machines
def test_sleeping_forever_is_stopped_at_the_wall_clock() -> None:
    done = run("import time\ntime.sleep(60)", SandboxLimits(wall_seconds=1))
    assert done.stopped_by == "wall_clock" and done.exit_code != 0
    assert done.usage["cpu_ms"] < 1000


def test_a_100_mb_print_is_cut_at_the_output_limit() -> None:
    limits = SandboxLimits(output_bytes=64 * 1024, wall_seconds=10)
    done = run("print('x' * 100_000_000)", limits)
    assert done.stopped_by == "output" and done.truncated
    assert len(done.stdout) + len(done.stderr) == limits.output_bytes


def test_nothing_can_be_written_outside_the_work_dirs() -> None:
    for target in ("/x", "/usr/evil", "/tmp/../etc-file", "/dev/evil", str(ROOT / "planted.txt")):
        done = run(f"open({target!r}, 'w').write('x')")
        assert (done.exit_code, done.stopped_by) == (1, ""), (target, done.stderr)
        assert "Error" in last_line(done.stderr)
    assert not (ROOT / "planted.txt").exists()
    inside = run("open('/work/note.txt', 'w').write('ok')\nprint(open('note.txt').read())")
    assert (inside.exit_code, inside.stdout) == (0, "ok\n")


def test_big_files_are_stopped_at_the_file_and_disk_limits() -> None:
    """Seen from the host: a file the size of the limit, a file system with no room left."""
    limits = SandboxLimits(file_mb=1, work_mb=4)
    big = run("open('big', 'wb').write(b'x' * (2 << 20))", limits)
    assert big.stopped_by == "file_size" and "File too large" in big.stderr
    assert big.usage["files"]["work"]["kb"] == 1024
    full = run("for i in range(8):\n    open(f'f{i}', 'wb').write(b'x' * (900 << 10))", limits)
    assert full.stopped_by == "disk" and "No space left" in full.stderr
    fine = run("open('small', 'wb').write(b'x' * 1000)\nprint('ok')", limits)
    assert (fine.stopped_by, fine.stdout) == ("", "ok\n")


def test_runs_see_nothing_of_each_other() -> None:
    first = run(
        "open('/work/mine.txt', 'w').write('first')\n"
        "open('/tmp/mine.txt', 'w').write('first')\n"
        "open('/dev/shm/mine', 'w').write('first')\n"
        "print('written')"
    )
    assert (first.exit_code, first.stdout) == (0, "written\n")
    second = run(
        "import os\nprint(os.listdir('/work'), os.listdir('/tmp'), os.listdir('/dev/shm'))"
    )
    assert second.stdout == "[] [] []\n"


def test_dev_is_minimal_and_read_only() -> None:
    done = run(
        "import os\nprint(sorted(os.listdir('/dev')))\n"
        "print(len(open('/dev/urandom', 'rb').read(8)))\n"
        "open('/dev/planted', 'w')"
    )
    listed, random = done.stdout.splitlines()
    assert eval(listed) == ["fd", "full", "null", "random", "shm", "stderr", "stdin", "stdout",
                            "urandom", "zero"]  # fmt: skip
    assert random == "8" and "Read-only file system" in last_line(done.stderr)
    none = run("import os\nprint(os.path.exists('/dev/shm'))", SandboxLimits(shm_mb=0))
    assert none.stdout == "False\n"


def test_hostile_code_text_is_run_as_given() -> None:
    """NUL, lone surrogates and huge source reach the interpreter as bytes, never a crash."""
    nul = run("print('a\\x00b'.encode())")
    assert nul.stdout == "b'a\\x00b'\n"
    surrogate = run("print('\ud800')")  # a lone surrogate in the source text
    assert surrogate.exit_code != 0 and surrogate.stderr and surrogate.stopped_by == ""
    huge = run("x = 1\n" * 200_000 + "print(x)", SandboxLimits(memory_mb=512))
    assert huge.stdout == "1\n"
    nested = run("x = " + "[" * 5000 + "]" * 5000)
    assert nested.exit_code != 0 and nested.stopped_by == ""  # the parser's own limit
    assert "nested" in nested.stderr


def test_limits_are_checked() -> None:
    bad_values = [("cpu_seconds", 0), ("wall_seconds", 0), ("memory_mb", 0), ("files", 0),
                  ("processes", -1), ("cpus", 0), ("work_mb", 1.5), ("shm_mb", -1)]  # fmt: skip
    for field, bad in bad_values:
        with pytest.raises(ValueError, match=field):
            SandboxLimits(**{field: bad})
    assert SandboxLimits(memory_mb=64).shm_bytes == 64 << 20
    assert SandboxLimits(shm_mb=0).shm_bytes == 0


def test_the_sandboxs_python_must_live_under_usr(monkeypatch: pytest.MonkeyPatch) -> None:
    from runtime.code_executors.sandbox import setup

    outside = os.path.realpath(sys.executable)
    assert not outside.startswith("/usr/")  # the project's own interpreter, not the system's
    monkeypatch.setenv("AGENTDASH_SANDBOX_PYTHON", outside)
    with pytest.raises(setup.SandboxUnavailableError, match="not under /usr"):
        setup._python()
