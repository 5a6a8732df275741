"""tests/cpu_machine.py: the machine's CPU while a command runs, by kind of process."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.cpu_machine import TICK, Seen, Tally, cores_busy, kind_of, look, main, report

BURN = "import time\ne = time.process_time() + {s}\nwhile time.process_time() < e: pass"


def test_a_process_counts_from_the_first_look_and_one_born_later_in_full() -> None:
    tally = Tally()
    tally.add({(1, 10): Seen("daphne", 50.0)})  # running before: its 50 s are not the command's
    tally.add({(1, 10): Seen("daphne", 51.5), (2, 99): Seen("manage.py migrate", 0.4)})
    tally.add({(1, 10): Seen("daphne", 52.0)})  # the migrate ended: its last look stands
    assert tally.by_kind() == {"daphne": 2.0, "manage.py migrate": 0.4}


def test_a_pid_used_again_is_another_process() -> None:
    tally = Tally()
    tally.add({})
    tally.add({(7, 100): Seen("Celery", 3.0)})
    tally.add({(7, 200): Seen("Celery", 1.0)})  # the same pid, started later: a new one
    assert tally.by_kind() == {"Celery": 4.0}


def test_a_process_that_exited_unreaped_keeps_the_kind_it_was_seen_with() -> None:
    tally = Tally()
    tally.add({})
    tally.add({(5, 1): Seen("manage.py check", 0.1)})
    tally.add({(5, 1): Seen("other: python3", 0.3, named=False)})  # a zombie: no command line
    tally.add({(6, 1): Seen("other: kworker", 0.2, named=False)})  # none ever: its name
    assert tally.by_kind() == {"manage.py check": 0.3, "other: kworker": 0.2}


def _process(proc: Path, pid: int, argv: list[str], ticks: int) -> None:
    """A process as ``/proc`` shows it: its stat (utime ``ticks``, stime 0, started at tick
    500) and its command line."""
    (proc / str(pid)).mkdir(exist_ok=True)
    after_name = ["S", "1"] + ["0"] * 9 + [str(ticks), "0"] + ["0"] * 6 + ["500"]
    (proc / str(pid) / "stat").write_text(f"{pid} (python3) {' '.join(after_name)}\n")
    (proc / str(pid) / "cmdline").write_bytes("\0".join(argv).encode() + b"\0")


def test_a_child_seen_before_its_exec_counts_as_what_it_became(tmp_path: Path) -> None:
    # Forked, not yet exec'd: the child shows its parent's command line, and its pid and start
    # time stay the same through the exec.
    _process(tmp_path, 40, ["python", "manage.py", "check"], 10)
    _process(tmp_path, 41, ["python", "manage.py", "check"], 0)
    tally = Tally()
    tally.add(look(tmp_path))
    _process(tmp_path, 41, ["python", "-c", "burn", "manage.py", "probe"], 3 * TICK)
    _process(tmp_path, 40, ["python", "manage.py", "check"], 10 + TICK)
    tally.add(look(tmp_path))
    assert tally.by_kind() == {"manage.py probe": 3.0, "manage.py check": 1.0}


@pytest.mark.parametrize(
    ("name", "argv", "kind"),
    [
        (
            "chromium-headle",
            ["/usr/bin/chromium-headless-shell", "--headless"],
            "browser (Chromium)",
        ),
        ("exe", ["/usr/bin/chromium-headless-shell", "--type=renderer"], "browser (Chromium)"),
        ("exe", ["/bin/something"], "other: exe"),
        ("python", [sys.executable, "manage.py", "ingest_key", "create"], "manage.py ingest_key"),
        ("python", [sys.executable, "-m", "daphne", "agentdash.asgi:application"], "daphne"),
        ("postgres", ["postgres: agentdash test 127.0.0.1(5000) idle"], "PostgreSQL"),
        (
            "python",
            [sys.executable, "-u", "-c", "import sys;exec(eval(sys.stdin.readline()))"],
            "pytest worker",
        ),
    ],
)
def test_kinds(name: str, argv: list[str], kind: str) -> None:
    assert kind_of(name, argv) == kind


def test_the_report_says_what_was_seen_against_the_cores() -> None:
    lines = report({"browser (Chromium)": 30.0, "daphne": 10.0, "other: x": 0.01}, 50.0, 60.0)
    assert lines[0].startswith("40.0 s of CPU seen in 60 s; the cores were busy 50.0 s (80%")
    assert lines[1:] == ["     30.0  browser (Chromium)", "     10.0  daphne"]


@pytest.mark.slow  # burns CPU on purpose
def test_a_command_s_processes_are_counted_by_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cpu.json"
    # A child that starts a grandchild and, as a daemon's parent does, never reaps it: no
    # rusage of the command's counts the grandchild; a look at the machine does. Once done
    # burning, the child waits, idle, for the grandchild's output to end (its exit), so that
    # a look, however late on a loaded machine, sees all the child burnt.
    burn = BURN.format(s=0.5)
    grandchild = (
        "import subprocess, sys\n"
        f"g = subprocess.Popen([sys.executable, '-c', {burn!r}, 'manage.py', 'probe'],"
        " stdout=subprocess.PIPE)"
    )
    code = main(
        [
            "--every",
            "0.05",
            "--json",
            str(out),
            "--",
            sys.executable,
            "-c",
            grandchild + "\n" + BURN.format(s=0.3) + "\ng.stdout.read()",
            "manage.py",
            "check",
        ]
    )
    assert code == 0
    found = json.loads(out.read_text())
    by_kind = found["by_kind"]
    assert by_kind["manage.py check"] == pytest.approx(0.3, abs=0.12)
    assert by_kind.get("manage.py probe", 0.0) > 0.0  # seen while it ran, though nobody reaped it
    assert "s of CPU seen" in capsys.readouterr().err


def test_cores_busy_leaves_idle_and_io_wait_out(tmp_path: Path) -> None:
    # user nice system idle iowait irq softirq steal (guest, guest_nice: inside user already)
    (tmp_path / "stat").write_text("cpu  100 5 50 800 40 3 2 1 7 0\ncpu0 1 2 3 4\n")
    assert cores_busy(tmp_path) == (100 + 5 + 50 + 3 + 2 + 1) / TICK
