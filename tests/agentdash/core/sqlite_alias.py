"""A database of a test's own: an SQLite file under ``ALIAS`` with this project's backend,
whatever database the suite runs on."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from django.db import connections

ALIAS = "sqlite_backend_test"


@contextlib.contextmanager
def own_database(path: Path, **options: Any) -> Iterator[Callable[[], list[str]]]:
    """``ALIAS`` on the file ``path`` with a table ``names`` (``options`` added to the
    backend's); yields a reader of the names. Call it with the database unblocked."""
    from django.db import connection

    connections.settings[ALIAS] = {
        **connection.settings_dict,
        "ENGINE": "agentdash.core.sqlite",
        "NAME": str(path),
        "OPTIONS": {
            "init_command": "PRAGMA journal_mode=WAL;",
            "transaction_mode": "IMMEDIATE",
            **options,
        },
        "TEST": {},
    }

    def names() -> list[str]:
        with connections[ALIAS].cursor() as cursor:
            cursor.execute("SELECT name FROM names ORDER BY rowid")
            return [row[0] for row in cursor.fetchall()]

    try:
        with connections[ALIAS].cursor() as cursor:
            cursor.execute("CREATE TABLE IF NOT EXISTS names (name TEXT NOT NULL)")
        yield names
    finally:
        connections[ALIAS].close()
        del connections.settings[ALIAS]
        if hasattr(connections._connections, ALIAS):
            delattr(connections._connections, ALIAS)


def insert(name: str) -> None:
    with connections[ALIAS].cursor() as cursor:
        cursor.execute("INSERT INTO names (name) VALUES (%s)", [name])
