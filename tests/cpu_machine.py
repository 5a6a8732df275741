"""Where the whole machine's CPU goes while a command runs, by kind of process:
``python -m tests.cpu_machine -- make test``.

:mod:`tests.cpu_spent` charges each module the CPU of its pytest process and of the processes
that process started and reaped; what no process of the run reaps is not there (the browser's
renderers, started by its zygote; PostgreSQL and Redis, started as daemons). This looks at
every process on the machine instead, every ``--every`` seconds: each one's CPU (user +
system, from ``/proc``) counts from the first look at it — in full for a process born after
the first look, the part since then for one already running — to the last, and is summed by
its kind (the browser, daphne, a Celery worker, PostgreSQL, a ``manage.py`` command by its
name, a pytest worker, …). A process that lives less than one interval can be missed; the
report says how many seconds of CPU were seen against what the machine's cores gave
(``/proc/stat``), so what it missed shows. Linux only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

PROC = Path("/proc")
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True)
class Seen:
    """One process as a look found it: its kind and its CPU so far (seconds)."""

    kind: str
    cpu: float
    named: bool = True
    """Whether its command line was there to read: an exited process not reaped yet (a
    zombie) has none, and keeps the kind it was seen with before (``Tally``)."""


def kind_of(name: str, argv: Sequence[str]) -> str:
    """What a process is, for the report: from its name (``comm``) and its command line."""
    line = " ".join(argv)
    rules: tuple[tuple[bool, str], ...] = (
        (name.startswith("chrom") or (name == "exe" and "--type=" in line), "browser (Chromium)"),
        (name.startswith("node"), "Playwright's driver (node)"),
        (name.startswith(("postgres", "pg_ctl")), "PostgreSQL"),
        (name.startswith("redis"), "Redis"),
        ("daphne" in line or "agentdash.asgi" in line, "daphne"),
        ("celery" in line, "Celery"),
        ("manage.py" in line, "manage.py " + _after(argv, "manage.py")),
        (
            "execnet" in line or "import sys;exec(eval(sys.stdin.readline()))" in line,
            "pytest worker",
        ),
        ("pytest" in line, "pytest"),
        (name in ("ruff", "mypy", "tsc", "make", "git", "bwrap", "npm"), name),
    )
    for matches, kind in rules:
        if matches:
            return kind
    return f"other: {name}"


def _after(argv: Sequence[str], word: str) -> str:
    """The argument after the first one ending in ``word`` ("" when none)."""
    for index, arg in enumerate(argv):
        if arg.endswith(word):
            return argv[index + 1] if index + 1 < len(argv) else ""
    return ""


def look(proc: Path = PROC) -> dict[tuple[int, int], Seen]:
    """Every process now, by (pid, start time): its kind and CPU seconds. The command line is
    read at every look: a child forked and not yet exec'd shows its parent's, and keeps its pid
    and start time through the exec, so a kind read once could be its parent's for good."""
    found: dict[tuple[int, int], Seen] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue  # it ended meanwhile
        kind = kind_of(stat[stat.index("(") + 1 : stat.rindex(")")], argv)
        cpu = (int(fields[11]) + int(fields[12])) / TICK
        found[(int(entry.name), int(fields[19]))] = Seen(kind, cpu, named=any(argv))
    return found


def cores_busy(proc: Path = PROC) -> float:
    """The machine's busy CPU seconds so far (idle and waiting on I/O left out), summed over
    its cores."""
    numbers = [int(x) for x in (proc / "stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = numbers[3] + (numbers[4] if len(numbers) > 4 else 0)
    return (sum(numbers[:8]) - idle) / TICK


@dataclass
class Tally:
    """CPU seconds by kind, from looks taken one after another."""

    first: dict[tuple[int, int], float] = field(default_factory=dict)
    last: dict[tuple[int, int], Seen] = field(default_factory=dict)
    looks: int = 0

    def add(self, found: Mapping[tuple[int, int], Seen]) -> None:
        for key, seen in found.items():
            if key not in self.first:
                self.first[key] = seen.cpu if self.looks == 0 else 0.0
            before = self.last.get(key)
            if not seen.named and before is not None:
                seen = Seen(before.kind, seen.cpu, named=False)
            self.last[key] = seen
        self.looks += 1

    def by_kind(self) -> dict[str, float]:
        totals: dict[str, float] = {}
        for key, seen in self.last.items():
            totals[seen.kind] = totals.get(seen.kind, 0.0) + seen.cpu - self.first[key]
        return dict(sorted(totals.items(), key=lambda item: -item[1]))


def report(totals: Mapping[str, float], busy: float, wall: float) -> list[str]:
    """The report's lines: what was seen against what the cores were busy with, then kinds."""
    seen = sum(totals.values())
    lines = [
        f"{seen:.1f} s of CPU seen in {wall:.0f} s; the cores were busy {busy:.1f} s "
        f"({seen / busy:.0%} of it seen)"
        if busy
        else f"{seen:.1f} s of CPU seen in {wall:.0f} s"
    ]
    lines += [f"{cpu:9.1f}  {kind}" for kind, cpu in totals.items() if cpu >= 0.05]
    return lines


def watch(command: Sequence[str], every: float) -> tuple[int, dict[str, float], float, float]:
    """Run ``command``, looking every ``every`` s until it ends: its exit code, CPU by kind,
    the cores' busy seconds meanwhile and the wall seconds."""
    tally = Tally()
    tally.add(look())
    busy_before = cores_busy()
    started = time.monotonic()
    child = subprocess.Popen(list(command))
    while child.poll() is None:
        tally.add(look())
        time.sleep(every)
    tally.add(look())
    busy_after = cores_busy()
    return child.returncode, tally.by_kind(), busy_after - busy_before, time.monotonic() - started


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=float, default=0.5, help="seconds between looks")
    parser.add_argument("--json", type=Path, help="also write CPU by kind here")
    parser.add_argument("command", nargs="+", help="what to run (after --)")
    args = parser.parse_args(list(argv) if argv is not None else None)
    code, totals, busy, wall = watch(args.command, args.every)
    if args.json:
        args.json.write_text(json.dumps({"by_kind": totals, "busy_s": busy, "wall_s": wall}))
    print("\n".join(report(totals, busy, wall)), file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
