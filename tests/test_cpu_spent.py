"""tests/cpu_spent.py: the CPU a module's tests spend, its own and its started processes'."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.cpu_spent import AT_THE_END, CpuSpent, report

SLACK = 0.06  # getrusage counts in the kernel's ticks, and rounds to the ms


def burn(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


@pytest.mark.slow  # a second of CPU burnt on purpose
def test_each_module_is_charged_what_ran_until_the_next_began(tmp_path: Path) -> None:
    spent = CpuSpent(tmp_path / "cpu-1.jsonl")
    spent.pytest_runtest_protocol(SimpleNamespace(nodeid="tests/a.py::test_one"))  # type: ignore[arg-type]
    burn(0.15)
    spent.pytest_runtest_protocol(SimpleNamespace(nodeid="tests/a.py::test_two"))  # type: ignore[arg-type]
    burn(0.1)
    spent.pytest_runtest_protocol(SimpleNamespace(nodeid="tests/b.py::test_one"))  # type: ignore[arg-type]
    child = "import time; e = time.process_time() + 0.45\nwhile time.process_time() < e: pass"
    subprocess.run([sys.executable, "-c", child], check=True)  # started and reaped here
    ending = spent.pytest_runtest_teardown(nextitem=None)
    next(ending)  # (a hook wrapper) then the fixtures' teardown, session-wide ones included
    burn(0.1)
    spent.pytest_sessionfinish()

    lines = report(tmp_path)
    assert "3 modules" in lines[0]
    rows = {line.split(None, 5)[5]: [float(x) for x in line.split()[:4]] for line in lines[1:]}
    assert rows[AT_THE_END][1] >= 0.1 - SLACK
    total_a, own_a, children_a, _ = rows["tests/a.py"]
    assert own_a >= 0.25 - SLACK and children_a == 0
    total_b, own_b, children_b, _ = rows["tests/b.py"]
    assert children_b >= 0.45 - SLACK and own_b < 0.25 - SLACK
    assert total_b > total_a and lines[1].endswith("tests/b.py")  # most first
