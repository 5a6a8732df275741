"""The layers of agentdash/ (docs/ARCHITECTURE.md): every import points down.

Every import under agentdash/ is read with ``ast`` — at module level and inside functions
alike; only ``if TYPE_CHECKING:`` blocks are left out (they never run). Each module belongs to
an app (``agentdash/<app>/…``), to a library (:data:`LIBRARIES`: ``agentdash/otel.py``) or
to the site wiring (``settings/``, ``urls.py``, ``asgi.py``, ``http_limits.py``, ``routing.py``,
``celery_app.py`` and the package itself). The test fails on an
import of an app of a higher layer, or of a peer in the same layer that :data:`WITHIN_LAYER`
does not allow (which also rules out any circle of apps), on a circle of apps, and on a circle
of files.

:data:`LAYERS` (with :data:`WITHIN_LAYER`) is the one declaration of the layers;
docs/ARCHITECTURE.md draws it (a test below keeps the two in step). A feature owns a folder:
its templates in ``agentdash/<app>/templates/<app>/`` and its scripts and styles in
``agentdash/<app>/static/<app>/`` (also tested here).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings

from tests import import_graph
from tests.import_graph import Import, cycles

ROOT = Path(settings.BASE_DIR).resolve()
PACKAGE = "agentdash"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("otel", "client"),
    ("core",),
    ("changes",),
    ("agent_sessions", "spans", "registry", "controls", "instructions"),
    ("runs", "ingest"),
    ("remote", "live", "evals", "scores", "playground"),
    ("demo", "dashboard", "monitor"),
    ("site",),
)
"""Bottom first. An app imports apps of the layers below its own; within its layer, only the
ones :data:`WITHIN_LAYER` names."""

WITHIN_LAYER = frozenset(
    {
        ("controls", "agent_sessions"),  # a callback switch may be scoped to one session
        ("spans", "agent_sessions"),  # a span's session names the agent and owner it counts for
        ("dashboard", "demo"),  # the pages show the demo's login hint
        ("client", "otel"),  # the remote client streams the app's spans with otel
        ("live", "remote"),  # a socket's confirmation answer may be a remote app's pause
    }
)
"""The imports allowed between apps of one layer; every other pair of peers is independent."""

LIBRARIES = frozenset({"otel", "client"})
"""Modules of the package that are no Django app: plain Python for other programs too (the
span processor external agents install, the client that puts them under the controls),
importing nothing of the package but each other."""

ORDER: tuple[str, ...] = tuple(app for layer in LAYERS for app in layer)
"""The apps bottom to top, as ``INSTALLED_APPS`` lists them (the libraries aside)."""

SITE_MODULES = frozenset({"settings", "urls", "asgi", "routing", "celery_app", "http_limits"})


def app_of(module: str) -> str:
    """The app a module belongs to, or ``site`` for the wiring around the apps."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in SITE_MODULES:
        return "site"
    return parts[1]


def scan(root: Path) -> list[Import]:
    return import_graph.scan(root, PACKAGE)


def modules_under(root: Path) -> dict[str, Path]:
    return import_graph.modules_under(root, PACKAGE)


def upward(
    imports: Iterable[Import],
    layers: tuple[tuple[str, ...], ...] = LAYERS,
    within: frozenset[tuple[str, str]] = WITHIN_LAYER,
) -> list[str]:
    """Imports of an app that is not below the importer: of a higher layer, or of a peer in
    the same layer that ``within`` does not allow (or of an app in no layer)."""
    level = {app: i for i, layer in enumerate(layers) for app in layer}
    problems = []
    for found in imports:
        source, target = app_of(found.source), app_of(found.target)
        if source == target:
            continue
        if source not in level or target not in level:
            problems.append(f"{found.source}: {source} or {target} is in no layer")
        elif level[target] > level[source] or (
            level[target] == level[source] and (source, target) not in within
        ):
            problems.append(
                f"{found.source}:{found.line} imports {found.target}: {source} may not import "
                f"{target} ({target} is not below it)"
            )
    return problems


def app_cycles(imports: Iterable[Import]) -> list[list[str]]:
    return cycles(
        (app_of(i.source), app_of(i.target))
        for i in imports
        if app_of(i.source) != app_of(i.target)
    )


def file_cycles(imports: Iterable[Import]) -> list[list[str]]:
    # A package's ``__init__`` runs before any of its modules: importing a submodule is not
    # an import of the package's other modules, so only module → module edges count.
    return cycles((i.source, i.target) for i in imports)


# ── The project ──────────────────────────────────────────────────────────────────────────
IMPORTS = scan(ROOT)


def test_the_scan_sees_the_project() -> None:
    sources = {i.source for i in IMPORTS}
    assert {"agentdash.live.consumers", "agentdash.runs.worker", "agentdash.asgi"} <= sources
    # Lazy imports inside functions are read too (the apps' ready() import their modules).
    assert any(
        i.source == "agentdash.runs.apps" and i.target == "agentdash.runs.host" for i in IMPORTS
    )


def test_every_import_points_down() -> None:
    assert upward(IMPORTS) == []


def test_only_the_site_wiring_imports_the_live_app() -> None:
    importers = {app_of(i.source) for i in IMPORTS if app_of(i.target) == "live"}
    assert importers <= {"live", "site"}


def test_no_circle_of_apps() -> None:
    assert app_cycles(IMPORTS) == []


def test_no_circle_of_files() -> None:
    assert file_cycles(IMPORTS) == []


def test_the_libraries_import_nothing_of_the_package() -> None:
    """Nothing but each other (the client streams spans with otel) and themselves."""
    assert [
        i for i in IMPORTS if app_of(i.source) in LIBRARIES and app_of(i.target) not in LIBRARIES
    ] == []
    for library in LIBRARIES:
        assert f"{PACKAGE}.{library}" in modules_under(ROOT), f"{library} is a module"


def test_every_app_has_a_place_in_the_order() -> None:
    folders = {p.name for p in (ROOT / PACKAGE).iterdir() if (p / "__init__.py").is_file()}
    installed = {
        config.name.split(".")[1]
        for config in apps.get_app_configs()
        if config.name.startswith(f"{PACKAGE}.")
    }
    assert folders - SITE_MODULES - LIBRARIES == set(ORDER) - {"site"} - LIBRARIES
    assert installed == set(ORDER) - {"site"} - LIBRARIES
    assert all(level < peers for level, peers in _within_layer_levels())


def _within_layer_levels() -> list[tuple[int, int]]:
    """(the importer's place, its peer's place) in its layer, for each allowed peer import:
    a peer imported is always to the left of its importer."""
    places = {app: layer.index(app) for layer in LAYERS for app in layer}
    return [(places[target], places[source]) for source, target in WITHIN_LAYER]


def test_installed_apps_are_listed_bottom_to_top() -> None:
    ours = [
        name.split(".")[1] for name in settings.INSTALLED_APPS if name.startswith(f"{PACKAGE}.")
    ]
    assert ours == [app for app in ORDER if app != "site" and app not in LIBRARIES]


def test_architecture_md_draws_the_layers_in_this_order() -> None:
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    block = re.search(r"```text\n(.*?)```", text, re.S)
    assert block, "docs/ARCHITECTURE.md has a ```text block with the layers"
    drawn = []
    for line in block.group(1).splitlines():
        names = re.findall(r"\b(" + "|".join(ORDER) + r")\b", line.split("│")[0])
        if names:
            drawn.append(tuple(dict.fromkeys(names)))
    assert tuple(reversed(drawn)) == LAYERS, "the picture lists the layers top first"
    for app in ORDER[:-1]:
        assert f"### {app}" in text, f"docs/ARCHITECTURE.md says what {app} owns"


def test_every_feature_keeps_its_web_files_in_its_own_folder() -> None:
    for config in apps.get_app_configs():
        if not config.name.startswith(f"{PACKAGE}."):
            continue
        folder = Path(config.path)
        for kind in ("templates", "static"):
            base = folder / kind
            if not base.is_dir():
                continue
            for path in base.rglob("*"):
                if path.is_file():
                    first = path.relative_to(base).parts[0]
                    # An admin template override goes where the admin looks for it.
                    assert first in (config.label, "admin"), (
                        f"{path.relative_to(ROOT)}: keep it under {kind}/{config.label}/"
                    )


# ── The scanner itself: each rule can fail ───────────────────────────────────────────────
def plant(tmp_path: Path, files: Mapping[str, str]) -> list[Import]:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for folder in {p.parent for p in tmp_path.rglob("*.py")}:
        (folder / "__init__.py").touch()
    return scan(tmp_path)


def test_a_planted_upward_import_fails(tmp_path: Path) -> None:
    found = plant(
        tmp_path,
        {
            "agentdash/core/a.py": "def f():\n    from agentdash.live.pipeline import x\n",
            "agentdash/live/pipeline.py": "x = 1\n",
        },
    )
    (problem,) = upward(found)
    assert problem.startswith("agentdash.core.a:2 imports agentdash.live.pipeline")


def test_sideways_relative_and_attribute_imports_are_caught(tmp_path: Path) -> None:
    found = plant(
        tmp_path,
        {
            "agentdash/spans/a.py": (
                "from ..registry import loader\nimport agentdash.runs.b.thing\n"
            ),
            "agentdash/registry/loader.py": "",
            "agentdash/runs/b.py": "thing = 1\n",
        },
    )
    assert {(i.source, i.target) for i in found} == {
        ("agentdash.spans.a", "agentdash.registry.loader"),
        ("agentdash.spans.a", "agentdash.runs.b"),
    }
    assert len(upward(found)) == 2  # registry is a peer spans may not use; runs is above


def test_peers_in_one_layer_are_independent_unless_allowed(tmp_path: Path) -> None:
    found = plant(
        tmp_path,
        {
            "agentdash/controls/a.py": "from agentdash.agent_sessions import b\n",
            "agentdash/agent_sessions/b.py": "from agentdash.registry import c\n",
            "agentdash/registry/c.py": "",
        },
    )
    (problem,) = upward(found)
    assert "agent_sessions may not import registry" in problem


def test_type_checking_imports_do_not_count(tmp_path: Path) -> None:
    found = plant(
        tmp_path,
        {
            "agentdash/core/a.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from agentdash.live import b\nelse:\n    pass\n"
            ),
            "agentdash/live/b.py": "",
        },
    )
    assert found == []


def test_circles_of_apps_and_of_files_are_found(tmp_path: Path) -> None:
    found = plant(
        tmp_path,
        {
            "agentdash/runs/a.py": "from agentdash.runs import b\n",
            "agentdash/runs/b.py": "def f():\n    from agentdash.runs.a import g\n",
            "agentdash/live/c.py": "from agentdash.runs import a\n",
            "agentdash/runs/d.py": "from agentdash.live import c\n",
        },
    )
    assert file_cycles(found) == [["agentdash.runs.a", "agentdash.runs.b"]]
    assert app_cycles(found) == [["live", "runs"]]


@pytest.mark.parametrize("module", ["agentdash.settings", "agentdash", "agentdash.celery_app"])
def test_the_site_wiring_is_the_top(module: str) -> None:
    assert app_of(module) == "site"
