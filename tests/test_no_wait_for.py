"""No ``asyncio.wait_for`` in the shipped code: ``asyncio.timeout`` instead.

On Python 3.11 (the oldest this project runs on), ``wait_for`` returns the awaited call's
result when the task is cancelled just as that call ends: the cancellation is lost. A loop
that waits with it (the control listener's probes) then goes on after it was cancelled, and
whatever awaits its end (a worker's shutdown, a test's teardown) waits forever. The
``async with asyncio.timeout(…)`` block keeps the cancellation.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def wait_for_calls(source: str) -> list[int]:
    """Lines of ``source`` that call ``asyncio.wait_for`` (or a bare imported ``wait_for``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        named = (isinstance(func, ast.Attribute) and func.attr == "wait_for"
                 and isinstance(func.value, ast.Name) and func.value.id == "asyncio")  # fmt: skip
        if named or (isinstance(func, ast.Name) and func.id == "wait_for"):
            found.append(node.lineno)
    return found


def test_the_check_finds_a_wait_for() -> None:
    assert wait_for_calls("import asyncio\nawait asyncio.wait_for(x, 1)\n") == [2]
    assert wait_for_calls("from asyncio import wait_for\nwait_for(x, 1)\n") == [2]
    assert wait_for_calls("async with asyncio.timeout(1):\n    await x\n") == []


def test_shipped_code_waits_with_asyncio_timeout() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}"
        for folder in ("agentdash", "runtime")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for line in wait_for_calls(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], offenders
