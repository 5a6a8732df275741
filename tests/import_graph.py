"""Every import of a package, read with ``ast`` (nothing is imported), for the layering tests
of ``agentdash/`` and ``runtime/``: at module level and inside functions alike; only
``if TYPE_CHECKING:`` blocks are left out (they never run). And the circles of a graph."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Import:
    source: str  # the importing module, dotted
    target: str  # the imported module, dotted (a module of the package)
    path: str  # the importing file, relative to the root
    line: int

    def where(self) -> str:
        return f"{self.path}:{self.line} imports {self.target}"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules_under(root: Path, package: str) -> dict[str, Path]:
    """Every module of ``package`` under ``root``, by dotted name."""
    return {module_name(p, root): p for p in sorted((root / package).rglob("*.py"))}


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST) -> Iterable[ast.Import | ast.ImportFrom]:
    """Every import statement, wherever it sits, except under ``if TYPE_CHECKING:``."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def imports_of(
    source: str, path: Path, modules: Mapping[str, Path], root: Path, package: str
) -> list[Import]:
    """The modules of ``package`` that ``source`` (at ``path``) imports, each once."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    relative = path.relative_to(root).as_posix()
    found = []
    for node in _import_nodes(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:  # relative: from the package the module is in
                anchor = source.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            # ``from pkg import name``: the submodule ``pkg.name`` if there is one, else pkg.
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                for alias in node.names
            ]
        for target in targets:
            while target and target not in modules:  # ``import a.b.c`` of an attribute
                target = target.rpartition(".")[0]
            if target.split(".")[0] == package and target != source:
                found.append(Import(source, target, relative, node.lineno))
    return list(dict.fromkeys(found))  # ``from pkg import a, b`` of one module: once


def scan(root: Path, package: str) -> list[Import]:
    """Every import of ``package``'s modules under ``root``."""
    modules = modules_under(root, package)
    return [
        found
        for name, path in modules.items()
        for found in imports_of(name, path, modules, root, package)
    ]


def cycles(edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """The circles of a directed graph: its strongly connected components of more than one
    node (Tarjan), each sorted."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found
