"""The sandbox for real (bubblewrap, scripts/sandbox.sh installs it): every way out that
model-written code might try fails, and the run says which limit or denial stopped it."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from runtime.code_executors import SandboxLimits, SandboxOutcome, sandbox_check, sandbox_run

ROOT = Path(__file__).resolve().parents[3]
FAST = SandboxLimits(cpu_seconds=2, wall_seconds=5, memory_mb=128, processes=16)


def run(code: str, limits: SandboxLimits = FAST) -> SandboxOutcome:
    return asyncio.run(sandbox_run(code, limits))


def last_line(text: str) -> str:
    return next((line for line in reversed(text.splitlines()) if line.strip()), "")


def test_the_sandbox_is_there() -> None:
    """CI installs bubblewrap (scripts/sandbox.sh): its absence fails here, never skips."""
    assert sandbox_check().startswith("bubblewrap")


def test_plain_code_runs_and_prints() -> None:
    done = run("import statistics\nprint(statistics.mean([2, 4, 9]))")
    assert (done.exit_code, done.stdout, done.stderr, done.stopped_by) == (0, "5\n", "", "")


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
    code = f"import socket\nsocket.create_connection(('127.0.0.1', {listener}), timeout=2)"
    done = run(code)
    assert done.exit_code != 0 and done.stopped_by == "network"
    assert "Connection refused" in last_line(done.stderr)
    outside = run("import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=2)")
    assert outside.exit_code != 0 and outside.stopped_by == "network"


@pytest.mark.parametrize(
    "path",
    [str(ROOT / "README.md"), str(ROOT / "agentdash" / "settings" / "__init__.py"), "/etc/shadow",
     "/etc/passwd", "/root/.bash_history"],
)  # fmt: skip
def test_no_project_file_and_no_host_secret_can_be_read(path: str) -> None:
    done = run(f"print(open({path!r}, 'rb').read()[:200])")
    assert done.exit_code != 0 and done.stdout == ""
    assert done.stopped_by == "filesystem", done.stderr


def test_the_environment_keeps_no_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTDASH_TEST_SECRET", "s3cr3t-value")
    done = run(
        "import os\nprint(sorted(os.environ))\n"
        "for pid in [p for p in os.listdir('/proc') if p.isdigit()]:\n"
        "    print(open(f'/proc/{pid}/environ').read())"
    )
    assert done.exit_code == 0
    assert "s3cr3t" not in done.stdout and "AGENTDASH" not in done.stdout
    assert set(eval(done.stdout.splitlines()[0])) <= {"HOME", "LANG", "PATH", "PWD"}


def test_a_fork_bomb_hits_the_process_limit() -> None:
    done = run("import os\nwhile True:\n    os.fork()")
    assert done.stopped_by == "processes" and done.exit_code != 0
    assert "Resource temporarily unavailable" in done.stderr


def test_a_memory_hog_hits_the_memory_limit() -> None:
    done = run("hog = bytearray(1 << 30)")
    assert (done.stopped_by, last_line(done.stderr)) == ("memory", "MemoryError")


def test_an_endless_loop_hits_the_cpu_limit() -> None:
    done = run("while True:\n    pass", SandboxLimits(cpu_seconds=1, wall_seconds=10))
    assert done.stopped_by == "cpu_time" and done.exit_code != 0
    assert done.duration_ms < 9_000


def test_sleeping_forever_hits_the_wall_clock() -> None:
    done = run("import time\ntime.sleep(60)", SandboxLimits(wall_seconds=1))
    assert done.stopped_by == "wall_clock" and done.exit_code != 0
    assert done.duration_ms < 5_000


def test_a_100_mb_print_is_cut_at_the_output_limit() -> None:
    limits = SandboxLimits(output_bytes=64 * 1024, wall_seconds=10)
    done = run("print('x' * 100_000_000)", limits)
    assert done.stopped_by == "output" and done.truncated
    assert len(done.stdout) + len(done.stderr) == limits.output_bytes


def test_nothing_can_be_written_outside_the_work_dir() -> None:
    for target in ("/x", "/usr/evil", "/tmp/../etc-file", str(ROOT / "planted.txt")):
        done = run(f"open({target!r}, 'w').write('x')")
        assert done.exit_code != 0 and done.stopped_by == "filesystem", (target, done.stderr)
    assert not (ROOT / "planted.txt").exists()
    inside = run("open('/work/note.txt', 'w').write('ok')\nprint(open('note.txt').read())")
    assert (inside.exit_code, inside.stdout) == (0, "ok\n")


def test_big_files_hit_the_file_and_disk_limits() -> None:
    limits = SandboxLimits(file_mb=1, work_mb=4)
    big = run("open('big', 'wb').write(b'x' * (2 << 20))", limits)
    assert big.stopped_by == "file_size", big.stderr
    full = run("for i in range(8):\n    open(f'f{i}', 'wb').write(b'x' * (900 << 10))", limits)
    assert full.stopped_by == "disk", full.stderr


def test_runs_see_nothing_of_each_other_and_leave_nothing_behind() -> None:
    marker = f"left-behind-{os.getpid()}"
    first = run(
        "import os, subprocess, sys\n"
        "open('/work/mine.txt', 'w').write('first')\n"
        "open('/tmp/mine.txt', 'w').write('first')\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', {marker!r}])\n"
        "print('started')"
    )
    assert (first.exit_code, first.stdout) == (0, "started\n")
    second = run("import os\nprint(os.listdir('/work'), os.listdir('/tmp'))")
    assert second.stdout == "[] []\n"
    alive = [
        pid for pid in os.listdir("/proc") if pid.isdigit() and marker.encode() in _cmdline(pid)
    ]
    assert alive == [], "a process of the sandbox outlived its run"


def _cmdline(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_hostile_code_text_is_run_as_given() -> None:
    """NUL, lone surrogates and huge source reach the interpreter as bytes, never a crash."""
    nul = run("print('a\\x00b'.encode())")
    assert nul.stdout == "b'a\\x00b'\n"
    surrogate = run("print('\ud800')")  # a lone surrogate in the source text
    assert surrogate.exit_code != 0 and surrogate.stderr
    huge = run("x = 1\n" * 200_000 + "print(x)", SandboxLimits(memory_mb=512))
    assert huge.stdout == "1\n"


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="cpu_seconds"):
        SandboxLimits(cpu_seconds=0)
    with pytest.raises(ValueError, match="wall_seconds"):
        SandboxLimits(wall_seconds=0)
