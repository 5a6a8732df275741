"""The embedded default's SQLite connections are kept for the next unit of work: a closed
connection goes back to a pool of the process, and the next connection of any thread takes
it (``agentdash.core.sqlite.pool``)."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import request_finished
from django.db import connections, transaction

from agentdash.core.sqlite import pool
from agentdash.core.sqlite.base import writer_lock
from tests.agentdash.core.sqlite_alias import ALIAS, insert, own_database

KEPT = 2


@pytest.fixture
def db(tmp_path: Path, django_db_blocker: Any) -> Iterator[Callable[[], list[str]]]:
    with (
        django_db_blocker.unblock(),
        own_database(tmp_path / "pooled.sqlite3", pool={"max_size": KEPT}) as names,
    ):
        try:
            yield names
        finally:
            pool.drain(name())


def name() -> str:
    return str(connections[ALIAS].settings_dict["NAME"])


def raw() -> sqlite3.Connection:
    connections[ALIAS].ensure_connection()
    connection = connections[ALIAS].connection
    assert isinstance(connection, sqlite3.Connection)
    return connection


def in_thread(work: Callable[[], Any]) -> Any:
    """``work``'s answer, computed on a new thread that closes its connection after."""
    answer: list[Any] = []

    def run() -> None:
        try:
            answer.append(work())
        finally:
            connections[ALIAS].close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(10)
    assert answer, "the thread failed"
    return answer[0]


def test_a_closed_connection_is_taken_by_the_next_thread(db: Callable[[], list[str]]) -> None:
    first = raw()
    connections[ALIAS].close()
    assert pool.idle_count(name()) == 1

    def write() -> sqlite3.Connection:
        insert("from another thread")
        return raw()

    assert in_thread(write) is first  # the same driver connection, schema already read
    assert pool.idle_count(name()) == 1  # and back again
    assert db() == ["from another thread"]


def test_a_cursor_left_part_way_does_not_hand_its_old_snapshot_on(
    db: Callable[[], list[str]],
) -> None:
    """WAL: a statement not stepped to its end keeps the snapshot it read; a connection
    pooled with one would show the next request data from before later commits."""
    for written in ("a", "b", "c"):
        insert(written)
    left = connections[ALIAS].cursor()
    left.execute("SELECT name FROM names ORDER BY rowid")
    assert left.fetchone() == ("a",)  # and left there, open
    kept = raw()
    connections[ALIAS].close()
    assert pool.idle_count(name()) == 1
    other = sqlite3.connect(name())
    other.execute("INSERT INTO names (name) VALUES ('after')")
    other.commit()
    other.close()
    assert in_thread(lambda: (raw() is kept, db())) == (True, ["a", "b", "c", "after"])


def test_a_transaction_left_open_is_rolled_back_before_the_connection_is_kept(
    db: Callable[[], list[str]],
) -> None:
    wrapper = connections[ALIAS]
    wrapper.set_autocommit(False)
    insert("never committed")
    assert raw().in_transaction
    kept = raw()
    wrapper.close()
    assert pool.idle_count(name()) == 1 and not kept.in_transaction
    assert not writer_lock(name()).locked
    assert db() == []


def test_a_connection_closed_inside_atomic_is_closed_for_real(db: Callable[[], list[str]]) -> None:
    atomic = transaction.atomic(using=ALIAS)
    atomic.__enter__()
    insert("lost")
    closed = raw()
    connections[ALIAS].close()  # a worker thread's connection dropped mid-transaction
    atomic.__exit__(None, None, None)
    assert pool.idle_count(name()) == 0
    with pytest.raises(sqlite3.ProgrammingError):
        closed.execute("SELECT 1")
    assert not writer_lock(name()).locked
    assert db() == []


def test_the_pool_keeps_at_most_its_size(db: Callable[[], list[str]]) -> None:
    opened: list[sqlite3.Connection] = []
    all_open = threading.Barrier(KEPT + 2)

    def hold() -> None:
        opened.append(raw())
        all_open.wait(10)  # every thread has a connection of its own before any closes

    threads = [threading.Thread(target=lambda: in_thread(hold)) for _ in range(KEPT + 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len({id(connection) for connection in opened}) == KEPT + 2
    assert pool.idle_count(name()) == KEPT
    closed = 0
    for connection in opened:
        try:
            connection.execute("SELECT 1")
        except sqlite3.ProgrammingError:
            closed += 1
    assert closed == 2


def test_a_file_made_again_under_its_name_is_never_written_through_an_old_connection(
    db: Callable[[], list[str]],
) -> None:
    insert("old")
    old = raw()
    connections[ALIAS].close()
    assert pool.idle_count(name()) == 1
    for suffix in ("", "-wal", "-shm"):
        Path(name() + suffix).unlink(missing_ok=True)
    made = sqlite3.connect(name())
    made.execute("CREATE TABLE names (name TEXT NOT NULL)")
    made.commit()
    insert("new")
    assert raw() is not old
    assert [row[0] for row in made.execute("SELECT name FROM names")] == ["new"]
    made.close()
    with pytest.raises(sqlite3.ProgrammingError):
        old.execute("SELECT 1")  # closed when it was found stale


def test_a_request_gives_its_connections_back_when_it_finishes(
    db: Callable[[], list[str]],
) -> None:
    """Whatever ``CONN_MAX_AGE`` says: a request's thread ends with the request."""
    connections[ALIAS].settings_dict["CONN_MAX_AGE"] = 600
    insert("during a request")
    request_finished.send(sender=None)
    assert connections[ALIAS].connection is None
    assert pool.idle_count(name()) == 1


def test_a_connection_in_atomic_is_not_given_back(db: Callable[[], list[str]]) -> None:
    with transaction.atomic(using=ALIAS):
        insert("kept")
        connections[ALIAS].to_pool()
        insert("still the same transaction")
    assert pool.idle_count(name()) == 0
    assert db() == ["kept", "still the same transaction"]


def _taken_in_child(name: str, answer: Any) -> None:
    answer.put((pool.take(name) is None, pool.idle_count(name)))


def test_a_forked_process_opens_its_own(db: Callable[[], list[str]]) -> None:
    raw()
    connections[ALIAS].close()
    assert pool.idle_count(name()) == 1
    context = multiprocessing.get_context("fork")
    answer = context.Queue()
    child = context.Process(target=_taken_in_child, args=(name(), answer))
    child.start()
    child.join(20)
    assert answer.get(timeout=5) == (True, 0)
    assert pool.idle_count(name()) == 1


def test_a_test_database_removed_takes_its_idle_connections_along(
    db: Callable[[], list[str]],
) -> None:
    kept = raw()
    connections[ALIAS].close()
    connections[ALIAS].creation._destroy_test_db(name(), verbosity=0)
    assert pool.idle_count(name()) == 0
    with pytest.raises(sqlite3.ProgrammingError):
        kept.execute("SELECT 1")


@pytest.mark.parametrize("size", [-1, "3", True, None])
def test_a_bad_pool_size_is_a_clear_error(
    tmp_path: Path, django_db_blocker: Any, size: Any
) -> None:
    with (
        django_db_blocker.unblock(),
        pytest.raises(ImproperlyConfigured, match=r'OPTIONS\["pool"\]'),
        own_database(tmp_path / "bad.sqlite3", pool={"max_size": size}),
    ):
        pass  # pragma: no cover - the database never opens


def test_an_in_memory_database_is_never_pooled(django_db_blocker: Any) -> None:
    with (
        django_db_blocker.unblock(),
        own_database(Path("file:pooled_memory?mode=memory&cache=shared"), pool={"max_size": 2}),
    ):
        raw()
        connections[ALIAS].close()
        assert pool.idle_count("file:pooled_memory?mode=memory&cache=shared") == 0
