"""The layers of runtime/ (docs/RUNTIME.md, "Layers"): every import points down.

Every import under runtime/ is read with ``ast`` — at module level and inside functions
alike; only ``if TYPE_CHECKING:`` blocks are left out (they never run). Nothing is imported,
so the test takes milliseconds. Each module belongs to a unit: its sub-package
(``runtime/agents/…`` → ``agents``), or its own name for a top-level module
(``runtime/runners.py`` → ``runners``); the package itself and ``python -m runtime`` are the
unit ``runtime``. The test fails on an import of a unit that is not in a lower layer (peers in
one layer are independent), on a circle of units or of files, and on a unit missing from
:data:`LAYERS` — each naming the file and line.

:data:`LAYERS` is the one declaration of the layers; docs/RUNTIME.md draws it (kept in step
below). A public name whose class lives below keeps its higher import path through a
re-export in the higher unit (``runtime.agents.callback_context`` re-exports
``runtime.contexts``), never the other way round.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from tests import import_graph
from tests.import_graph import Import, cycles

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "runtime"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "telemetry", "events"),
    ("sessions", "artifacts", "models"),
    ("memory", "callbacks"),
    ("contexts",),
    ("tools",),
    ("debug", "code_executors", "safety"),
    ("agents", "guardrails"),
    ("runners",),
    ("cli", "evaluation", "testing"),
    ("runtime",),
    ("examples",),
)
"""Bottom first. A unit imports units of the layers below its own, never a peer."""

ORDER: tuple[str, ...] = tuple(unit for layer in LAYERS for unit in layer)


def unit_of(module: str) -> str:
    """The unit a module belongs to: its sub-package or top-level module, or ``runtime`` for
    the package itself and ``runtime.__main__``."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "__main__":
        return PACKAGE
    return parts[1]


def scan(root: Path) -> list[Import]:
    return import_graph.scan(root, PACKAGE)


def modules_under(root: Path) -> dict[str, Path]:
    return import_graph.modules_under(root, PACKAGE)


def upward(imports: Iterable[Import], layers: tuple[tuple[str, ...], ...] = LAYERS) -> list[str]:
    """Imports of a unit that is not below the importer: of a higher layer or a peer (or of
    a unit in no layer)."""
    level = {unit: i for i, layer in enumerate(layers) for unit in layer}
    problems = []
    for found in imports:
        source, target = unit_of(found.source), unit_of(found.target)
        if source == target:
            continue
        if source not in level or target not in level:
            missing = source if source not in level else target
            problems.append(f"{found.where()}: {missing} is in no layer")
        elif level[target] >= level[source]:
            where = "a peer of" if level[target] == level[source] else "above"
            problems.append(
                f"{found.where()}: {source} may not import {target} ({target} is {where} {source})"
            )
    return problems


def unplaced(root: Path, layers: tuple[tuple[str, ...], ...] = LAYERS) -> list[str]:
    """Units under ``root`` missing from ``layers`` (with a file of each), and units declared
    that do not exist."""
    declared = {unit for layer in layers for unit in layer}
    files: dict[str, str] = {}
    for name, path in modules_under(root).items():
        files.setdefault(unit_of(name), path.relative_to(root).as_posix())
    problems = [
        f"{file}: {unit} has no place in LAYERS"
        for unit, file in files.items()
        if unit not in declared
    ]
    problems += [f"{unit} is in LAYERS but not under {PACKAGE}/" for unit in declared - set(files)]
    return sorted(problems)


def unit_cycles(imports: Iterable[Import]) -> list[str]:
    """Each circle of units, with the imports that make it (file and line)."""
    between = [i for i in imports if unit_of(i.source) != unit_of(i.target)]
    problems = []
    for circle in cycles((unit_of(i.source), unit_of(i.target)) for i in between):
        members = set(circle)
        edges = sorted(
            i.where()
            for i in between
            if unit_of(i.source) in members and unit_of(i.target) in members
        )
        problems.append(f"circle of {', '.join(circle)}: " + "; ".join(edges))
    return problems


def file_cycles(imports: Iterable[Import]) -> list[list[str]]:
    # A package's ``__init__`` runs before any of its modules: importing a submodule is not
    # an import of the package's other modules, so only module → module edges count.
    return cycles((i.source, i.target) for i in imports)


# ── The runtime ──────────────────────────────────────────────────────────────────────────
IMPORTS = scan(ROOT)


def test_the_scan_sees_the_runtime() -> None:
    sources = {i.source for i in IMPORTS}
    assert {"runtime.runners", "runtime.agents.llm_agent", "runtime"} <= sources
    assert any(i.source == "runtime.runners" and i.target == "runtime.memory" for i in IMPORTS)


def test_every_import_points_down() -> None:
    assert upward(IMPORTS) == []


def test_every_unit_has_a_place_in_the_layers() -> None:
    assert unplaced(ROOT) == []
    assert len(ORDER) == len(set(ORDER)), "a unit is declared once"


def test_no_circle_of_units() -> None:
    assert unit_cycles(IMPORTS) == []


def test_no_circle_of_files() -> None:
    assert file_cycles(IMPORTS) == []


def test_runtime_md_draws_the_layers_in_this_order() -> None:
    text = (ROOT / "docs" / "RUNTIME.md").read_text(encoding="utf-8")
    block = re.search(r"```text\n(.*?)```", text, re.S)
    assert block, "docs/RUNTIME.md has a ```text block with the layers"
    drawn = []
    for line in block.group(1).splitlines():
        names = re.findall(r"\b(" + "|".join(ORDER) + r")\b", line.split("│")[0])
        if names:
            drawn.append(tuple(dict.fromkeys(names)))
    assert tuple(reversed(drawn)) == LAYERS, "the picture lists the layers top first"


# ── The scanner itself: each rule can fail ───────────────────────────────────────────────
def plant(tmp_path: Path, files: Mapping[str, str]) -> list[Import]:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for folder in {p.parent for p in tmp_path.rglob("*.py")}:
        (folder / "__init__.py").touch()
    return scan(tmp_path)


def test_a_planted_upward_import_inside_a_function_fails(tmp_path: Path) -> None:
    found = plant(
        tmp_path,
        {
            "runtime/tools/a.py": "def f():\n    from runtime.runners import Runner\n",
            "runtime/runners.py": "Runner = 1\n",
        },
    )
    (problem,) = upward(found)
    assert problem == (
        "runtime/tools/a.py:2 imports runtime.runners: tools may not import runners "
        "(runners is above tools)"
    )


def test_peers_in_one_layer_are_independent(tmp_path: Path) -> None:
    found = plant(
        tmp_path,
        {
            "runtime/guardrails/a.py": "from runtime.agents import b\n",
            "runtime/agents/b.py": "from ..tools import c\n",  # relative, and down: fine
            "runtime/tools/c.py": "",
        },
    )
    (problem,) = upward(found)
    assert "guardrails may not import agents (agents is a peer of guardrails)" in problem


def test_relative_and_attribute_imports_are_caught(tmp_path: Path) -> None:
    found = plant(
        tmp_path,
        {
            "runtime/contexts/a.py": "from ..agents import loader\nimport runtime.tools.b.thing\n",
            "runtime/agents/loader.py": "",
            "runtime/tools/b.py": "thing = 1\n",
        },
    )
    assert {(i.source, i.target) for i in found} == {
        ("runtime.contexts.a", "runtime.agents.loader"),
        ("runtime.contexts.a", "runtime.tools.b"),
    }
    assert len(upward(found)) == 2


def test_type_checking_imports_do_not_count(tmp_path: Path) -> None:
    found = plant(
        tmp_path,
        {
            "runtime/contexts/a.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from runtime.agents import b\nelse:\n    pass\n"
            ),
            "runtime/agents/b.py": "",
        },
    )
    assert found == []


def test_circles_of_units_and_of_files_are_found(tmp_path: Path) -> None:
    found = plant(
        tmp_path,
        {
            "runtime/guardrails/a.py": "from runtime.guardrails import b\n",
            "runtime/guardrails/b.py": "def f():\n    from runtime.guardrails.a import g\n",
            "runtime/safety/c.py": "from runtime.guardrails import a\n",
            "runtime/guardrails/d.py": "from runtime.safety import c\n",
        },
    )
    assert file_cycles(found) == [["runtime.guardrails.a", "runtime.guardrails.b"]]
    assert unit_cycles(found) == [
        "circle of guardrails, safety: runtime/guardrails/d.py:1 imports runtime.safety.c; "
        "runtime/safety/c.py:1 imports runtime.guardrails.a"
    ]


def test_a_unit_missing_from_the_layers_is_named(tmp_path: Path) -> None:
    plant(tmp_path, {"runtime/flows/a.py": "", "runtime/runners.py": ""})
    problems = unplaced(tmp_path, layers=(("runners",), ("planners",)))
    assert problems == [
        "planners is in LAYERS but not under runtime/",
        "runtime/__init__.py: runtime has no place in LAYERS",
        "runtime/flows/__init__.py: flows has no place in LAYERS",
    ]


@pytest.mark.parametrize(
    ("module", "unit"),
    [
        ("runtime", "runtime"),
        ("runtime.__main__", "runtime"),
        ("runtime.runners", "runners"),
        ("runtime.code_executors.sandbox.seccomp", "code_executors"),
    ],
)
def test_units(module: str, unit: str) -> None:
    assert unit_of(module) == unit
