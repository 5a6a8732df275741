"""The house's sizes: no shipped file over 400 lines, no function over 60 (docs/ARCHITECTURE.md,
"Keeping it so"). Shipped: the code, scripts, styles and templates of ``agentdash/``,
``runtime/``, ``static/`` and ``templates/`` (migrations are generated, not written).

Python functions are measured by ``ast`` (decorators aside, the docstring in); a browser
script's functions by their braces: a line that opens a function, a method or an arrow body
and the first line after it that closes at the same indentation (the project's scripts are
formatted so; a function this cannot measure is one that breaks that format).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ("agentdash", "runtime", "static", "templates")
SUFFIXES = {".py", ".js", ".css", ".html"}
FILE_MAX = 400
FUNCTION_MAX = 60

_JS_OPENS = re.compile(
    r"^(?P<indent>\s*)(?:export\s+)?(?:async\s+)?(?:"
    r"function\b[^;]*\{\s*$"  # function name(…) {
    r"|(?:static\s+)?(?:get\s+|set\s+|async\s+)?[A-Za-z_$][\w$]*\s*\([^;]*\)\s*\{\s*$"  # method
    r"|.*=>\s*\{\s*$"  # … => {
    r")"
)
_NOT_FUNCTIONS = ("if", "for", "while", "switch", "catch", "} else", "else", "//", "*", "try")


def shipped_files() -> list[Path]:
    return sorted(
        path
        for top in SHIPPED
        for path in (ROOT / top).rglob("*")
        if path.suffix in SUFFIXES and path.is_file() and "migrations" not in path.parts
    )


def python_functions(text: str) -> Iterator[tuple[str, int, int]]:
    """(name, first line, lines) of every function and method."""
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            assert node.end_lineno is not None
            yield node.name, node.lineno, node.end_lineno - node.lineno + 1


def js_functions(text: str) -> Iterator[tuple[str, int, int]]:
    """(its first line's text, first line, lines) of every function, method and arrow body."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        opened = _JS_OPENS.match(line)
        if not opened or line.strip().startswith(_NOT_FUNCTIONS):
            continue
        closing = opened.group("indent") + "}"
        for j in range(i + 1, len(lines)):
            if lines[j].startswith(closing):
                yield line.strip()[:60], i + 1, j - i + 1
                break


def test_no_shipped_file_is_over_400_lines() -> None:
    files = shipped_files()
    assert len(files) > 100  # the walk found the project
    over = [
        f"{path.relative_to(ROOT)}: {n} lines"
        for path in files
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > FILE_MAX
    ]
    assert not over, f"over {FILE_MAX} lines (split by what the parts do): {over}"


def test_no_function_is_over_60_lines() -> None:
    over = []
    for path in shipped_files():
        if path.suffix not in (".py", ".js"):
            continue
        text = path.read_text(encoding="utf-8")
        found = python_functions(text) if path.suffix == ".py" else js_functions(text)
        over += [
            f"{path.relative_to(ROOT)}:{line} {name} ({n} lines)"
            for name, line, n in found
            if n > FUNCTION_MAX
        ]
    assert not over, f"functions over {FUNCTION_MAX} lines: {over}"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("export function f(a) {\n" + "  x();\n" * 70 + "}\n", 72),
        ("class A {\n  method(a, b) {\n" + "    x();\n" * 3 + "  }\n}\n", 5),
        ("const f = async (a) => {\n  x();\n};\n", 3),
        ("  if (a) {\n    x();\n  }\n", None),
    ],
)
def test_the_script_measure_finds_functions(source: str, expected: int | None) -> None:
    found = [n for _name, _line, n in js_functions(source)]
    assert found == ([] if expected is None else [expected])
