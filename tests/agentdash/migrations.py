"""Data-migration tests: the database taken back to an earlier migration, then forward."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from django.apps.registry import Apps
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


@contextlib.contextmanager
def migrated_back_to(
    app: str, migration: str, *, also: tuple[tuple[str, str], ...] = ()
) -> Iterator[Apps]:
    """Take the database back to ``app``'s ``migration`` (and each ``(app, migration)`` of
    ``also``) and give the historical models (write the rows the next migrations should
    carry over); on leaving, migrate everything forward again. Needs a transactional test
    (``django_db(transaction=True)``)."""
    executor = MigrationExecutor(connection)
    target = [(app, migration), *also]
    executor.migrate(target)
    try:
        yield executor.loader.project_state(target).apps
    finally:
        executor = MigrationExecutor(connection)  # a fresh graph: the database moved
        executor.migrate(executor.loader.graph.leaf_nodes())
