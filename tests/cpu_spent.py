"""Where the test run's CPU goes, module by module: ``AGENTDASH_TEST_CPU=DIR make test``.

`make test` is bound by the CPU of two cores, so its time is the sum of the CPU its tests
spend, less what waits. Each pytest process (each xdist worker, each pass) appends one line a
module to ``DIR/cpu-<pid>.jsonl``: the process's own CPU seconds while the module's tests ran
and the CPU of the processes it started and reaped meanwhile (servers, workers, ``manage.py``;
not a process another one started, such as the browser under Playwright's driver, which is
counted when that driver ends, with the process's last teardown). ``python -m
tests.cpu_spent DIR`` adds the lines up, most first. Off unless the variable is set.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

VARIABLE = "AGENTDASH_TEST_CPU"
AT_THE_END = "(the process's last teardown: session-wide fixtures, e.g. the browser)"


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


class CpuSpent:
    """Charges the CPU spent between two tests' starts to the module of the first: its
    fixtures' set-up, calls and teardown (a module's own servers end at its last test's
    teardown, before the next module's first set-up)."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.module = ""
        self.since = _cpu()
        self.started = time.monotonic()

    def _charge(self, module: str) -> None:
        now = _cpu()
        if self.module:
            line = {
                "module": self.module,
                "own_s": round(now[0] - self.since[0], 3),
                "children_s": round(now[1] - self.since[1], 3),
                "wall_s": round(time.monotonic() - self.started, 3),
                "database": os.environ.get("DATABASE_URL", "").split(":", 1)[0] or "sqlite",
            }
            with self.out.open("a") as file:
                file.write(json.dumps(line) + "\n")
        self.module, self.since, self.started = module, now, time.monotonic()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> None:
        module = item.nodeid.partition("::")[0]
        if module != self.module:
            self._charge(module)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, nextitem: pytest.Item | None) -> Iterator[None]:
        if nextitem is None:  # the last test: every fixture left ends with it
            self._charge(AT_THE_END)
        yield

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self) -> None:
        self._charge("")


def register(config: pytest.Config) -> None:
    where = os.environ.get(VARIABLE)
    if not where:
        return
    out = Path(where)
    out.mkdir(parents=True, exist_ok=True)
    config.pluginmanager.register(CpuSpent(out / f"cpu-{os.getpid()}.jsonl"), "agentdash-cpu")


def report(where: Path) -> list[str]:
    """The modules by CPU spent, most first, with the run's total."""
    spent: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for path in sorted(where.glob("cpu-*.jsonl")):
        for raw in path.read_text().splitlines():
            line: dict[str, Any] = json.loads(raw)
            entry = spent[(line["module"], line["database"])]
            entry[0] += line["own_s"]
            entry[1] += line["children_s"]
            entry[2] += line["wall_s"]
    rows = sorted(spent.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))
    total = sum(own + children for own, children, _ in spent.values())
    lines = [f"{total:8.1f} s of CPU in {len(rows)} modules (own + started processes)"]
    for (module, database), (own, children, wall) in rows:
        lines.append(
            f"{own + children:8.1f} {own:7.1f} {children:7.1f} {wall:7.1f}  {database:8} {module}"
        )
    return lines


if __name__ == "__main__":
    print("\n".join(report(Path(sys.argv[1]))))
