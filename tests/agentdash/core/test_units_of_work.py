"""A unit of work in a pool thread (``core.threads.in_worker_thread``) leaves its thread's
connection as a request leaves its own: nothing of it read by the next unit."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from django.db import connections

from agentdash.core.threads import in_worker_thread, thread_pool_close
from tests.agentdash.core.sqlite_alias import ALIAS, insert, own_database


@pytest.fixture
def one_thread() -> Iterator[ThreadPoolExecutor]:
    """One pool thread, which keeps its connection from one unit of work to the next."""
    yield ThreadPoolExecutor(max_workers=1)


def test_a_statement_left_part_way_is_ended_with_its_unit_of_work(
    tmp_path: Path, django_db_blocker: Any, one_thread: ThreadPoolExecutor
) -> None:
    """WAL: a statement not stepped to its end keeps the snapshot it read. Left open by one
    unit (its cursor kept somewhere, as a generator abandoned in a reference cycle keeps
    it), the thread's kept connection would show every later unit data from before it."""
    path = tmp_path / "kept.sqlite3"
    with django_db_blocker.unblock(), own_database(path) as names:
        connections.settings[ALIAS]["CONN_MAX_AGE"] = 600  # each thread keeps its own
        for written in ("a", "b", "c"):
            insert(written)
        kept: list[Any] = []

        def leave_one_open() -> int:
            cursor = connections[ALIAS].cursor()
            cursor.execute("SELECT name FROM names ORDER BY rowid")
            assert cursor.fetchone() == ("a",)
            kept.append(cursor)  # held past the unit
            return id(connections[ALIAS].connection)

        def read() -> tuple[int, list[str]]:
            return id(connections[ALIAS].connection), names()

        try:
            first = asyncio.run(in_worker_thread(leave_one_open, executor=one_thread)())
            other = sqlite3.connect(path)
            other.execute("INSERT INTO names (name) VALUES ('after')")
            other.commit()
            other.close()
            again, found = asyncio.run(in_worker_thread(read, executor=one_thread)())
        finally:
            asyncio.run(thread_pool_close(one_thread))
        assert again == first  # the same connection, kept by the thread
        assert found == ["a", "b", "c", "after"]
