"""The project's own templates and static files, found the way Django finds them (template
directories, staticfiles finders): the site-wide ``templates/`` and ``static/`` and every
app's own folders; never Django's or a library's."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles import finders
from django.template import engines

ROOT = Path(settings.BASE_DIR).resolve()


def _ours(path: Path) -> bool:
    path = path.resolve()
    return path.is_relative_to(ROOT) and ".venv" not in path.relative_to(ROOT).parts


def rel(path: Path) -> str:
    """``path`` relative to the project root."""
    return path.resolve().relative_to(ROOT).as_posix()


def project_template_dirs() -> list[Path]:
    """The template directories Django searches that belong to this project."""
    dirs = {Path(d).resolve() for d in engines["django"].template_dirs}
    return sorted(d for d in dirs if _ours(d))


def project_templates() -> list[Path]:
    return sorted(
        path
        for directory in project_template_dirs()
        for path in directory.rglob("*")
        if path.is_file() and path.suffix in (".html", ".htm", ".txt", ".xml", ".svg")
    )


def project_static() -> dict[str, Path]:
    """Every static file of the project by the name ``{% static %}`` gives it (e.g.
    ``dashboard/js/session/session.js``), as the staticfiles finders find it."""
    found: dict[str, Path] = {}
    for finder in finders.get_finders():
        for name, storage in finder.list(ignore_patterns=[]):
            path = Path(storage.path(name))
            if _ours(path):
                found.setdefault(Path(name).as_posix(), path.resolve())
    return dict(sorted(found.items()))
