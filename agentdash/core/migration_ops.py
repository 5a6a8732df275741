"""Operations the project's migrations share."""

from __future__ import annotations

from typing import Any

from django.db import migrations


def content_types_moved(*, old_app: str, new_app: str, models: list[str]) -> migrations.RunPython:
    """A ``RunPython`` that moves the content types of ``models`` (lower-case model names)
    from ``old_app`` to ``new_app``, so the permissions given on them (and the admin's log
    entries) follow the models to their new app. A model whose content type already exists
    in ``new_app`` keeps both (nothing granted is deleted). Needs the ``contenttypes`` app's
    migrations first. Reversible."""

    def move(apps: Any, schema_editor: Any, source: str, target: str) -> None:
        content_type = apps.get_model("contenttypes", "ContentType")
        for model in models:
            if not content_type.objects.filter(app_label=target, model=model).exists():
                content_type.objects.filter(app_label=source, model=model).update(app_label=target)

    return migrations.RunPython(
        lambda apps, editor: move(apps, editor, old_app, new_app),
        lambda apps, editor: move(apps, editor, new_app, old_app),
    )
