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

With ``OPTIONS["pool"] = {"max_size": n}``, a connection closed outside a transaction goes
back to a pool of the process (:mod:`agentdash.core.sqlite.pool`) and the next connection of
any thread takes it; a request gives its connections back when it finishes, whatever
``CONN_MAX_AGE`` says (the next request may run on another thread).

A commit then wakes the process's checkpointer of the database file, which copies the WAL
back into the file on a thread of its own (:mod:`agentdash.core.sqlite.checkpoints`), not
inside the commit while the lock is held.

Selected by ``ENGINE = "agentdash.core.sqlite"`` (``agentdash.settings`` does it for every
SQLite database); everything else is Django's backend unchanged.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Iterator
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.signals import request_finished
from django.db import OperationalError, connections
from django.db.backends.sqlite3 import base, creation

from agentdash.core.sqlite import checkpoints, pool

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


def _pool_size(options: Any) -> int:
    size = options.get("max_size") if isinstance(options, dict) else None
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise ImproperlyConfigured(
            'SQLite\'s OPTIONS["pool"] is {"max_size": n}, n a whole number ≥ 0 '
            f"(idle connections kept), not {options!r}"
        )
    return size


# The ignores: the type hints Django is checked with omit its test databases' private methods.
class DatabaseCreation(creation.DatabaseCreation):
    """Django's, and a test database made or removed takes its idle connections with it."""

    def _create_test_db(self, verbosity: int, autoclobber: bool, keepdb: bool = False) -> str:
        pool.drain(str(self._get_test_db_name()))  # type: ignore[attr-defined]
        return str(super()._create_test_db(verbosity, autoclobber, keepdb))  # type: ignore[misc]

    def _destroy_test_db(self, test_database_name: str, verbosity: int) -> None:
        super()._destroy_test_db(test_database_name, verbosity)  # type: ignore[misc]
        pool.drain(str(test_database_name))


# The ignores: the type hints Django is checked with omit its backends' private transaction methods.
class DatabaseWrapper(base.DatabaseWrapper):
    creation_class = DatabaseCreation
    _held: WriterLock | None = None
    _pool_max = 0
    _identity: pool.Identity | None = None
    _checkpointer: checkpoints.Checkpointer | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._cursors: weakref.WeakSet[CursorWrapper] = weakref.WeakSet()

    def writer(self) -> tuple[WriterLock, float]:
        """This database's writer lock, and how long a writer waits for it."""
        lock = writer_lock(self.settings_dict["NAME"])
        return lock, float(self.settings_dict.get("OPTIONS", {}).get("timeout", DEFAULT_WAIT_S))

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """This database's writer lock, held for the block (a write SQLite commits on its
        own: the checkpointer is woken after it, as after a commit)."""
        lock, wait = self.writer()
        _lock_taken(lock, wait)
        try:
            yield
        finally:
            lock.release()
        if self._checkpointer is not None:
            self._checkpointer.committed()

    def get_connection_params(self) -> dict[str, Any]:
        params: dict[str, Any] = super().get_connection_params()
        size = _pool_size(params.pop("pool")) if "pool" in params else 0
        self._pool_max = 0 if self.is_in_memory_db() else size
        name = str(self.settings_dict["NAME"])
        plain = not self.is_in_memory_db() and not name.startswith("file:")
        self._checkpointer = checkpoints.checkpointer(name) if plain else None
        return params

    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        name = str(conn_params["database"])
        if self._pool_max:
            taken = pool.take(name)
            if taken is not None:
                connection, self._identity = taken
                # As a new connection has them (a failed schema change may have left them off).
                connection.execute("PRAGMA foreign_keys = ON")
                return connection
        connection = super().get_new_connection(conn_params)
        self._identity = pool.file_identity(name) if self._pool_max else None
        if self._checkpointer is not None:  # SQLite's own checkpoints: a backstop only
            connection.execute(f"PRAGMA wal_autocheckpoint = {checkpoints.BACKSTOP_PAGES}")
        return connection

    def to_pool(self) -> None:
        """Give the connection back to the pool now, if there is one and no transaction
        holds it (the end of a request)."""
        if self._pool_max and self.connection is not None and not self.in_atomic_block:
            self.close()

    def _pooled(self) -> bool:
        """Whether the open connection went back to the pool (rolled back first if a
        transaction was left open outside ``atomic``)."""
        connection, identity = self.connection, self._identity
        if not self._pool_max or identity is None or self.in_atomic_block:
            return False
        try:
            self.statements_end()
            if connection.in_transaction:
                connection.rollback()
        except Exception:
            return False
        return pool.give(str(self.settings_dict["NAME"]), connection, identity, self._pool_max)

    def statements_end(self) -> None:
        """Close the cursors this connection left open. A cursor left part-way through its
        rows keeps its statement, and with it the snapshot it read (WAL), open: whoever
        reads through the connection next — the next unit of work of a thread that keeps
        it, or the thread that takes it from the pool — would read that old snapshot, blind
        to every commit since. Not inside a transaction (its reads may still be under way)."""
        if self.in_atomic_block:
            return
        for cursor in list(self._cursors):
            cursor.close()
        self._cursors.clear()

    def create_cursor(self, name: str | None = None) -> CursorWrapper:
        cursor: CursorWrapper = self.connection.cursor(factory=CursorWrapper)
        cursor.owner = self
        self._cursors.add(cursor)  # closed when a unit of work ends (``statements_end``)
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
        if self._checkpointer is not None:  # the lock given back: the copy is not in its way
            self._checkpointer.committed()

    def _rollback(self) -> None:
        try:
            super()._rollback()  # type: ignore[misc]
        finally:
            self._release()

    def _close(self) -> None:
        try:
            if not self._pooled():
                super()._close()  # type: ignore[misc]
        finally:
            self._release()

    def _release(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            held.release()


def _requests_connections_pooled(**_: Any) -> None:
    for wrapper in connections.all(initialized_only=True):
        if isinstance(wrapper, DatabaseWrapper):
            wrapper.to_pool()


request_finished.connect(_requests_connections_pooled, dispatch_uid="agentdash.core.sqlite.pool")
