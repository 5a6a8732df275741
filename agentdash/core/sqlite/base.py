"""Django's SQLite backend, with the writers of one process queued in the process.

SQLite lets one writer in at a time. A second writer that finds the database locked is
parked by SQLite's busy handler, which *sleeps* and retries (1, 2, 5, 10 … up to 100 ms
between tries): under many concurrent writers — the runs, the live pipeline's flusher and
the operators of one daphne process — a writer often sleeps long after the lock was freed,
and who goes next is left to chance. Here a transaction (``BEGIN IMMEDIATE``, from
``transaction.atomic``) first takes a lock shared by every connection of this process to the
same database file, and gives it back when it commits, rolls back or closes: the writers of
one process queue and go in the moment the lock is free, and a thread marked with
:func:`writes_first` (the live pipeline's) goes before the others that wait. A write outside
a transaction (an ``UPDATE`` in autocommit, which SQLite commits on its own) takes the lock
for its statement too: it would otherwise meet a transaction of the process in SQLite's busy
handler, and sleep. Writers in *other* processes (a management command, a second server) are
still kept apart by SQLite.

Selected by ``ENGINE = "agentdash.core.sqlite"`` (``agentdash.settings`` does it for every
SQLite database); everything else is Django's backend unchanged.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from django.db import OperationalError
from django.db.backends.sqlite3 import base

DEFAULT_WAIT_S = 10.0
"""How long a transaction waits for the lock when the database sets no ``timeout``."""


class WriterLock:
    """A lock whose waiters marked ``first`` go before the others (in no given order among
    themselves), whatever the order they came in."""

    def __init__(self) -> None:
        self._changed = threading.Condition(threading.Lock())
        self._held = False
        self._first_waiting = 0
        self._waiting = 0

    def acquire(self, *, timeout: float, first: bool = False) -> bool:
        with self._changed:
            if first:
                self._first_waiting += 1
            self._waiting += 1
            try:
                free = self._changed.wait_for(
                    lambda: not self._held and (first or not self._first_waiting), timeout
                )
                if free:
                    self._held = True
                return free
            finally:
                self._waiting -= 1
                if first:
                    self._first_waiting -= 1
                    if not self._first_waiting:
                        self._changed.notify_all()  # an ordinary waiter may go now

    def release(self) -> None:
        with self._changed:
            self._held = False
            self._changed.notify_all()

    @property
    def locked(self) -> bool:
        return self._held

    @property
    def waiting(self) -> int:
        """How many wait for it (or are just taking it)."""
        return self._waiting


_locks: dict[str, WriterLock] = {}
_locks_guard = threading.Lock()
_first = threading.local()


def writer_lock(name: str) -> WriterLock:
    """The lock of the database ``name`` (a path, or an in-memory URI), one per process."""
    with _locks_guard:
        return _locks.setdefault(str(name), WriterLock())


@contextlib.contextmanager
def writes_first() -> Iterator[None]:
    """In this block, this thread's transactions go before the other waiting writers of the
    process (for latency-critical writers; without effect on other databases)."""
    before = getattr(_first, "on", False)
    _first.on = True
    try:
        yield
    finally:
        _first.on = before


_WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")


def _lock_taken(lock: WriterLock, wait: float) -> None:
    if not lock.acquire(timeout=wait, first=getattr(_first, "on", False)):
        raise OperationalError(
            f"database is locked (waited {wait:g} s behind this process's writers)"
        )


class CursorWrapper(base.SQLiteCursorWrapper):
    """Django's cursor, whose writes outside a transaction take the process's writer lock
    for their statement (``owner``: the connection whose lock it is)."""

    owner: DatabaseWrapper

    def execute(self, query: str, params: Any = None) -> Any:
        with self._alone(query):
            return super().execute(query, params)

    def executemany(self, query: str, param_list: Any) -> Any:
        with self._alone(query):
            return super().executemany(query, param_list)

    def _alone(self, query: str) -> contextlib.AbstractContextManager[None]:
        """The writer lock for a write SQLite would commit on its own; nothing otherwise."""
        if self.connection.in_transaction or not query.lstrip()[:7].upper().startswith(_WRITES):
            return contextlib.nullcontext()
        return self.owner.writing()


# The ignores: the type hints Django is checked with omit its backends' private transaction methods.
class DatabaseWrapper(base.DatabaseWrapper):
    _held: WriterLock | None = None

    def writer(self) -> tuple[WriterLock, float]:
        """This database's writer lock, and how long a writer waits for it."""
        lock = writer_lock(self.settings_dict["NAME"])
        return lock, float(self.settings_dict.get("OPTIONS", {}).get("timeout", DEFAULT_WAIT_S))

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """This database's writer lock, held for the block."""
        lock, wait = self.writer()
        _lock_taken(lock, wait)
        try:
            yield
        finally:
            lock.release()

    def create_cursor(self, name: str | None = None) -> CursorWrapper:
        cursor: CursorWrapper = self.connection.cursor(factory=CursorWrapper)
        cursor.owner = self
        return cursor

    def _start_transaction_under_autocommit(self) -> None:
        lock, wait = self.writer()
        _lock_taken(lock, wait)
        self._held = lock
        try:
            super()._start_transaction_under_autocommit()  # type: ignore[misc]
        except BaseException:
            self._release()
            raise

    def _commit(self) -> None:
        try:
            super()._commit()  # type: ignore[misc]
        finally:
            if self.connection is None or not self.connection.in_transaction:
                self._release()

    def _rollback(self) -> None:
        try:
            super()._rollback()  # type: ignore[misc]
        finally:
            self._release()

    def _close(self) -> None:
        try:
            super()._close()  # type: ignore[misc]
        finally:
            self._release()

    def _release(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            held.release()
