"""WAL checkpoints on a thread of their own, not inside a writer's commit.

In WAL mode a commit appends to the ``-wal`` file, and the pages it holds are copied back
into the database file by a checkpoint. By default SQLite makes one inside the commit that
takes the WAL past 1,000 pages: that writer, still holding this process's writer lock
(:mod:`agentdash.core.sqlite.base`), copies megabytes while every other writer of the
process waits. Measured with the OTLP ingest on this 2-core machine (docs/BENCHMARKS.md,
"OTLP ingest"): spans/s up 4–21 % with no checkpoint during the run.

Here each commit of the process wakes a :class:`Checkpointer` of its database file, which
makes a ``PASSIVE`` checkpoint (it waits for no reader or writer) on a connection of its
own, at most every ``EVERY_S``: the copy no longer holds the lock, and SQLite runs it without
Python's GIL, on the other core. SQLite's own checkpoint stays, past ``BACKSTOP_PAGES``
(``wal_autocheckpoint``, set on every connection of the backend): should the thread fall
behind or fail, the WAL still stays bounded.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import sqlite3
import threading
from pathlib import Path

from agentdash.core.sqlite import pool

logger = logging.getLogger(__name__)

EVERY_S = 0.2
"""The least time between two checkpoints of one database file (commits in between wait
for the next one: at most five a second, whatever the rate of commits)."""

BACKSTOP_PAGES = 10_000
"""SQLite's own checkpoint, inside a commit, once the WAL holds this many pages (40 MB of
4 KB pages): only when the thread has not kept up."""


class Checkpointer:
    """Checkpoints of one database file, made on a daemon thread started on the first commit
    (again after a fork: the thread does not follow the process) and stopped when the process
    exits (:meth:`stop`: its connection closed, so that the last one to close can fold the
    WAL into the file and remove it, as SQLite does)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.made = 0
        """Checkpoints made so far (in this process)."""
        self.rounds = 0
        """Wakes served so far, a checkpoint made or not (no file, a failure)."""
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._start = threading.Lock()

    def committed(self) -> None:
        """A commit went in: a checkpoint is made soon (at once when none was for ``EVERY_S``)."""
        if self._pid != os.getpid() or not (self._thread and self._thread.is_alive()):
            with self._start:
                if self._pid != os.getpid() or not (self._thread and self._thread.is_alive()):
                    self._wake, self._stopping = threading.Event(), threading.Event()
                    self._thread = threading.Thread(
                        target=self._serve, args=(self._wake, self._stopping),
                        name="sqlite-checkpoints", daemon=True,
                    )  # fmt: skip
                    self._thread.start()
                    self._pid = os.getpid()
        self._wake.set()

    def stop(self, timeout: float = 5.0) -> None:
        """End the thread, if it runs, once its checkpoint under way is done."""
        thread = self._thread
        if thread is None or self._pid != os.getpid():
            return
        self._stopping.set()
        self._wake.set()
        thread.join(timeout)

    def _serve(self, wake: threading.Event, stopping: threading.Event) -> None:
        connection: sqlite3.Connection | None = None
        opened: pool.Identity | None = None
        while True:
            wake.wait()
            wake.clear()
            if stopping.is_set():
                if connection is not None:
                    connection.close()
                return
            try:
                found = pool.file_identity(self.path)
                if connection is not None and found != opened:  # removed, or made again
                    connection.close()
                    connection = None
                if found is not None:
                    if connection is None:  # never makes the file (mode=rw)
                        uri = Path(self.path).as_uri() + "?mode=rw"
                        connection = sqlite3.connect(
                            uri, uri=True, isolation_level=None, check_same_thread=False
                        )
                        opened = found
                    connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                    self.made += 1
            except Exception:
                # The next commit tries again (on a new connection); SQLite's own checkpoint
                # keeps the WAL bounded meanwhile.
                logger.warning("a WAL checkpoint of %s failed", self.path, exc_info=True)
                if connection is not None:
                    with contextlib.suppress(Exception):
                        connection.close()
                connection = None
            self.rounds += 1
            stopping.wait(EVERY_S)  # the commits of that time share the next checkpoint


_CHECKPOINTERS: dict[str, Checkpointer] = {}
_CHECKPOINTERS_LOCK = threading.Lock()


def checkpointer(path: str) -> Checkpointer:
    """The process's checkpointer of the database file at ``path`` (a plain path, not a
    ``file:`` URI)."""
    key = os.path.realpath(path)
    with _CHECKPOINTERS_LOCK:
        found = _CHECKPOINTERS.get(key)
        if found is None:
            found = _CHECKPOINTERS[key] = Checkpointer(key)
        return found


def _stop_all() -> None:
    """At the process's exit: every checkpointer stopped (before the pool's connections
    close: registered after it, so run before it)."""
    for found in list(_CHECKPOINTERS.values()):
        found.stop()


def _after_fork() -> None:
    """In a forked child: locks as new (one held by another thread at the fork would stay
    held for ever); each checkpointer starts its thread again on the child's first commit."""
    global _CHECKPOINTERS_LOCK
    _CHECKPOINTERS_LOCK = threading.Lock()
    for found in _CHECKPOINTERS.values():
        found._start = threading.Lock()


atexit.register(_stop_all)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
