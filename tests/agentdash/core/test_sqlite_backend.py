"""The embedded default's SQLite backend: the writers of one process queue on a lock, and the
live pipeline's thread (``writes_first``) goes before the others that wait.

The backend tests use a database of their own (an SQLite file with this backend), so they
run whatever database the suite runs on.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import OperationalError, connections, transaction

from agentdash.core.sqlite.base import WriterLock, writer_lock, writes_first
from tests.agentdash.core.sqlite_alias import ALIAS, insert, own_database
from tests.waits import until


def in_thread(target: Callable[[], None], errors: list[str]) -> threading.Thread:
    def run() -> None:
        try:
            target()
        except Exception as exc:
            errors.append(repr(exc))
        finally:
            connections[ALIAS].close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


# ── The lock ───────────────────────────────────────────────────────────────────────────────
def test_a_waiter_marked_first_goes_before_those_that_came_earlier() -> None:
    lock = WriterLock()
    assert lock.acquire(timeout=1)
    order: list[str] = []
    waiting = threading.Barrier(4)

    def waiter(name: str, first: bool) -> Callable[[], None]:
        def run() -> None:
            waiting.wait()
            if first:  # comes last
                until(lambda: lock.waiting == 2, "the other two waiting")
            assert lock.acquire(timeout=10, first=first)
            order.append(name)
            lock.release()

        return run

    threads = [
        threading.Thread(target=waiter(name, first))
        for name, first in (("a", False), ("b", False), ("flusher", True))
    ]
    for thread in threads:
        thread.start()
    waiting.wait()
    until(lambda: lock.waiting == 3, "everyone waiting, the flusher last")
    lock.release()
    for thread in threads:
        thread.join(10)
    assert order[0] == "flusher" and sorted(order[1:]) == ["a", "b"]


def test_a_waiter_gives_up_after_its_timeout_and_the_lock_stays_usable() -> None:
    lock = WriterLock()
    assert lock.acquire(timeout=1)
    assert not lock.acquire(timeout=0.05)
    assert not lock.acquire(timeout=0.05, first=True)  # a first waiter that left ...
    lock.release()
    assert lock.acquire(timeout=0.05)  # ... does not keep the others out
    lock.release()


# ── The backend ────────────────────────────────────────────────────────────────────────────
@pytest.fixture
def db(tmp_path: Path, django_db_blocker: Any) -> Iterator[Callable[..., list[str]]]:
    """A database of its own (``ALIAS``) with a table ``names``; returns a reader of it."""
    with django_db_blocker.unblock(), own_database(tmp_path / "lock.sqlite3") as names:
        yield names


def lock() -> WriterLock:
    return writer_lock(connections[ALIAS].settings_dict["NAME"])


def test_a_transaction_holds_the_lock_until_it_commits_or_rolls_back(
    db: Callable[[], list[str]],
) -> None:
    assert not lock().locked
    with transaction.atomic(using=ALIAS):
        insert("held")
        assert lock().locked
        with transaction.atomic(using=ALIAS):  # a savepoint takes nothing more
            insert("nested")
        assert lock().locked
    assert not lock().locked
    with pytest.raises(RuntimeError), transaction.atomic(using=ALIAS):
        insert("rolled back")
        assert lock().locked
        raise RuntimeError
    assert not lock().locked
    assert db() == ["held", "nested"]


def test_closing_the_connection_in_a_transaction_frees_the_lock(
    db: Callable[[], list[str]],
) -> None:
    atomic = transaction.atomic(using=ALIAS)
    atomic.__enter__()
    insert("lost")
    assert lock().locked
    connections[ALIAS].close()  # e.g. a worker thread's connection dropped mid-transaction
    assert not lock().locked
    atomic.__exit__(None, None, None)
    assert db() == []


def holding(errors: list[str]) -> tuple[threading.Thread, threading.Event]:
    """A thread in a transaction that wrote ``holder`` and holds the lock until the event is
    set (started, and holding it, when this returns)."""
    release = threading.Event()

    def holder() -> None:
        with transaction.atomic(using=ALIAS):
            insert("holder")
            release.wait(10)

    thread = in_thread(holder, errors)
    until(lambda: lock().locked, "the holder's transaction")
    return thread, release


def writer(name: str, *, first: bool = False) -> Callable[[], None]:
    def run() -> None:
        with writes_first() if first else contextlib.nullcontext(), transaction.atomic(using=ALIAS):
            insert(name)

    return run


def test_writers_of_other_threads_wait_their_turn_and_lose_nothing(
    db: Callable[[], list[str]],
) -> None:
    errors: list[str] = []
    holder, release = holding(errors)
    threads = [holder, *(in_thread(writer(f"w{i}"), errors) for i in range(8))]
    until(lambda: lock().waiting == 8, "the writers waiting")
    assert db() == []  # WAL: a reader goes on; the writers all wait
    release.set()
    for thread in threads:
        thread.join(20)
    assert errors == []
    assert sorted(db()) == ["holder", *(f"w{i}" for i in range(8))]


def test_a_write_outside_a_transaction_queues_on_the_lock_too(
    db: Callable[[], list[str]],
) -> None:
    """A statement SQLite commits on its own (an ``UPDATE`` in autocommit) waits its turn on
    the process's lock — not in SQLite's busy handler, which sleeps past the moment the
    database is free — and goes when the transaction before it ends; a read does not wait."""
    errors: list[str] = []
    holder, release = holding(errors)
    alone = in_thread(lambda: insert("alone"), errors)  # no transaction: autocommit
    until(lambda: lock().waiting == 1, "the write outside a transaction, waiting on the lock")
    assert db() == []  # a read goes on meanwhile
    release.set()
    for thread in (holder, alone):
        thread.join(20)
    assert errors == []
    assert db() == ["holder", "alone"]
    assert not lock().locked and lock().waiting == 0


def test_the_thread_that_writes_first_overtakes_the_queue(db: Callable[[], list[str]]) -> None:
    errors: list[str] = []
    holder, release = holding(errors)
    threads = [holder, *(in_thread(writer(f"run-{i}"), errors) for i in range(4))]
    until(lambda: lock().waiting == 4, "the runs queued first")
    threads.append(in_thread(writer("flusher", first=True), errors))
    until(lambda: lock().waiting == 5, "the flusher queued last")
    release.set()
    for thread in threads:
        thread.join(20)
    assert errors == []
    assert db()[:2] == ["holder", "flusher"]


def test_a_writer_that_waits_too_long_gets_a_clear_error(db: Callable[[], list[str]]) -> None:
    errors: list[str] = []
    thread, release = holding(errors)
    connections[ALIAS].settings_dict["OPTIONS"]["timeout"] = 0.2
    try:
        with (
            pytest.raises(OperationalError, match="database is locked"),
            transaction.atomic(using=ALIAS),
        ):
            insert("late")
    finally:
        release.set()
        thread.join(10)
    assert errors == []
    assert not lock().locked
    assert db() == ["holder"]
