"""Operations the project's migrations share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import migrations

STORAGE_REPLACED = "agentdash.storage.replaced"
"""runtime.telemetry.attributes.AgentDash.STORAGE_REPLACED, as the store writes it (migrations
keep their own copy of what they write)."""


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


def rows_made_storable(
    *,
    app: str,
    model: str,
    fields: list[str],
    depth: int | None = None,
    marks: dict[str, Callable[[Any, int], Any]] | None = None,
) -> migrations.RunPython:
    """A ``RunPython`` that makes ``fields`` of every row of ``app.model`` storable
    (``core.hygiene.storable``: NUL and lone surrogates → U+FFFD, NaN and infinities as
    strings, values nested deeper than ``depth`` — by default what the store keeps — cut),
    for rows written before strings were checked where they enter. ``marks[field](value,
    changes)`` returns a changed value marked as the store marks it (the count of changes).
    Only SQLite can hold such rows — its JSON keeps a lone surrogate as an escape, and pages
    showing it failed — so elsewhere it does nothing. Not reversed (the replaced characters
    are gone)."""

    def clean(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor != "sqlite":
            return  # PostgreSQL refused them: none was ever stored
        from agentdash.core.hygiene import MAX_STORED_DEPTH, storable

        rows = apps.get_model(app, model)._default_manager
        changed = []
        for row in rows.only("pk", *fields).iterator(chunk_size=1_000):
            dirty = False
            for name in fields:
                fixed, count = storable(getattr(row, name), max_depth=depth or MAX_STORED_DEPTH)
                if count:
                    mark = (marks or {}).get(name)
                    setattr(row, name, mark(fixed, count) if mark else fixed)
                    dirty = True
            if dirty:
                changed.append(row)
            if len(changed) >= 500:
                rows.bulk_update(changed, fields)
                changed = []
        rows.bulk_update(changed, fields)

    return migrations.RunPython(clean, migrations.RunPython.noop)


def event_data_marked(data: Any, changes: int) -> Any:
    """Stored event data marked as ``agent_sessions.event_data`` marks what it changed."""
    if not isinstance(data, dict):
        return data
    metadata = dict(data.get("custom_metadata") or {})
    metadata[STORAGE_REPLACED] = int(metadata.get(STORAGE_REPLACED) or 0) + changes
    return {**data, "custom_metadata": metadata}


def span_attributes_marked(attributes: Any, changes: int) -> Any:
    """Span attributes marked as ``spans.span_version`` marks what it changed."""
    if not isinstance(attributes, dict):
        return attributes
    return {**attributes, STORAGE_REPLACED: int(attributes.get(STORAGE_REPLACED) or 0) + changes}
