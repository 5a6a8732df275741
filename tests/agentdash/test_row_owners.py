"""Each app is the only writer of its rows: a module writes a model through the ORM only if
the model is its own app's (``Model.objects.….update/delete/create/bulk_*``,
``select_for_update``, ``get_or_create``, ``update_or_create``, ``.save()``/``.delete()`` on
an instance it fetched by a query). Another app's rows change through that app's services.

Read statically (pure ``ast``): a name imported from ``agentdash.<app>.models`` and a write
method at the end of an attribute chain that starts at it. The admin (Django's, writing the
models it registers) and the migrations are the framework's writers, not ours. What still
writes across apps is listed in :data:`KNOWN`, each with why; the test fails on a new one and
on a listed one that is gone (then take it off the list).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.import_graph import imports_of, modules_under

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "agentdash"
WRITES = frozenset(
    {
        "create", "bulk_create", "bulk_update", "update", "delete", "get_or_create",
        "update_or_create", "select_for_update", "acreate", "aupdate", "adelete",
        "abulk_create", "abulk_update", "aget_or_create", "aupdate_or_create",
    }
)  # fmt: skip

KNOWN: dict[tuple[str, str, str], str] = {}
"""(module, model's app, model) → why it still writes another app's rows. Empty: keep it so."""


def _model_names(tree: ast.Module, own_app: str) -> dict[str, str]:
    """Names this module imported from another app's models → that app."""
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            parts = node.module.split(".")
            theirs = len(parts) == 3 and parts[0] == "agentdash" and parts[2] == "models"
            if theirs and parts[1] != own_app:
                for alias in node.names:
                    found[alias.asname or alias.name] = parts[1]
    return found


def _chain_root(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.Attribute | ast.Call | ast.Subscript):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


def writes_across_apps() -> set[tuple[str, str, str]]:
    found = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if len(parts) < 3 or "migrations" in parts or parts[-1] == "admin":
            continue
        app, module = parts[1], ".".join(p for p in parts if p != "__init__")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = _model_names(tree, app)
        if not names:
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr not in WRITES:
                continue
            root = _chain_root(node.func)
            if isinstance(root, ast.Name) and root.id in names:
                found.add((module, names[root.id], root.id))
    return found


def test_each_app_writes_only_its_own_rows() -> None:
    found = writes_across_apps()
    new = sorted(found - KNOWN.keys())
    assert not new, "writes of another app's rows (call that app's service instead): " + "; ".join(
        f"{m} writes {app}.{model}" for m, app, model in new
    )
    gone = sorted(KNOWN.keys() - found)
    assert not gone, f"no longer writes across apps: take off KNOWN: {gone}"


@pytest.mark.parametrize(
    "source",
    [
        "from agentdash.spans.models import Span\nSpan.objects.filter(a=1).update(b=2)\n",
        "from agentdash.spans.models import Span as S\nS.objects.select_for_update().get()\n",
        "from agentdash.spans.models import Span\nasync def f():\n    await Span.objects.acreate()",
    ],
)
def test_the_check_sees_a_write(source: str) -> None:
    tree = ast.parse(source)
    names = _model_names(tree, "ingest")
    calls = [
        n for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in WRITES
    ]  # fmt: skip
    roots = [_chain_root(c.func) for c in calls]
    assert names and all(isinstance(r, ast.Name) and r.id in names for r in roots)


# ── Pages read through the owners ─────────────────────────────────────────────────────────
PAGES = ("dashboard",)
"""The apps of pages: they read other apps through those apps' selectors and services, never
their models (a model named for a type only, under ``if TYPE_CHECKING:``, is no read)."""


def model_imports_of_pages() -> list[str]:
    """Where a page module imports another app's models to run: ``path:line imports X``."""
    modules = modules_under(ROOT, "agentdash")
    found = []
    for app in PAGES:
        for source, path in modules.items():
            if not source.startswith(f"agentdash.{app}."):
                continue
            for imported in imports_of(source, path, modules, ROOT, "agentdash"):
                parts = imported.target.split(".")
                if len(parts) >= 3 and parts[2] == "models" and parts[1] != app:
                    found.append(imported.where())
    return found


def test_pages_read_other_apps_through_their_selectors() -> None:
    found = model_imports_of_pages()
    assert not found, "a page reads another app's models (use its selectors): " + "; ".join(found)


def test_the_page_check_sees_a_model_import(tmp_path: Path) -> None:
    page = tmp_path / "agentdash" / "dashboard"
    page.mkdir(parents=True)
    (page / "view.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from agentdash.runs.models import Run\n"
        "def f():\n    from agentdash.spans.models import Span\n"
    )
    owner = tmp_path / "agentdash" / "spans"
    owner.mkdir()
    (owner / "models.py").write_text("")
    (tmp_path / "agentdash" / "runs").mkdir()
    (tmp_path / "agentdash" / "runs" / "models.py").write_text("")
    modules = modules_under(tmp_path, "agentdash")
    targets = [
        i.target
        for i in imports_of(
            "agentdash.dashboard.view", page / "view.py", modules, tmp_path, "agentdash"
        )
    ]
    assert targets == ["agentdash.spans.models"]  # the one under TYPE_CHECKING is no read
