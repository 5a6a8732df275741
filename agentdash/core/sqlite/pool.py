"""Idle SQLite connections of this process, kept for the next unit of work.

Opening an SQLite connection costs far more than most uses of one: the driver's connection,
Django's functions registered on it, the PRAGMAs, and then the first statement parses the
whole schema (~0.6 ms with this project's, ~0.5 ms of it the parse). Django's connections are
kept per thread (``CONN_MAX_AGE``), and a thread that ends takes its connection along —
Django's ASGI handler ended a thread with every request, so every request paid it. Here a
closed connection goes back to a pool of its database file instead, and the next connection
of any thread of the process takes it, schema and statement cache already loaded.

A connection is pooled only outside a transaction, by the process that opened it (a forked
child opens its own), and only while its file is the one it was opened on: a database file
deleted and made again under the same name (a test database, a reset) is never written
through an old connection.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sqlite3
import threading

Identity = tuple[int, int]
"""A file's device and inode number."""


def file_identity(name: str) -> Identity | None:
    """The identity of the database file ``name``, or ``None`` when there is none (yet)."""
    try:
        stat = os.stat(name)
    except (OSError, ValueError):  # missing, a URI, a NUL in the name
        return None
    return stat.st_dev, stat.st_ino


_pools: dict[tuple[int, str], list[tuple[sqlite3.Connection, Identity]]] = {}
"""(process id, database file) → its idle connections, each with the identity of its file."""
_guard = threading.Lock()


def _closed(connection: sqlite3.Connection) -> None:
    with contextlib.suppress(sqlite3.Error):
        connection.close()


def take(name: str) -> tuple[sqlite3.Connection, Identity] | None:
    """An idle connection to the database file ``name`` opened by this process, with the
    file's identity, or ``None``. Connections to a file no longer under that name are
    closed on the way."""
    now = file_identity(name)
    stale: list[sqlite3.Connection] = []
    found = None
    with _guard:
        idle = _pools.get((os.getpid(), name), [])
        while idle:
            connection, identity = idle.pop()
            if identity == now:
                found = connection, identity
                break
            stale.append(connection)
    for connection in stale:
        _closed(connection)
    return found


def give(name: str, connection: sqlite3.Connection, identity: Identity, max_size: int) -> bool:
    """Keep ``connection`` (outside a transaction, opened by this process on the file of
    ``identity``) for the next unit of work; ``False`` when it was not kept (the pool is
    full): the caller closes it. (Whether the file is still the same is asked when it is
    taken.)"""
    if connection.in_transaction or max_size <= 0:
        return False
    with _guard:
        idle = _pools.setdefault((os.getpid(), name), [])
        if len(idle) >= max_size:
            return False
        idle.append((connection, identity))
        return True


def idle_count(name: str) -> int:
    """How many idle connections to ``name`` this process keeps."""
    with _guard:
        return len(_pools.get((os.getpid(), name), []))


def drain(name: str | None = None) -> None:
    """Close this process's idle connections (to ``name``, or to every database)."""
    pid = os.getpid()
    with _guard:
        keys = [key for key in _pools if key[0] == pid and (name is None or key[1] == name)]
        gone = [connection for key in keys for connection, _ in _pools.pop(key)]
    for connection in gone:
        _closed(connection)


atexit.register(drain)  # the last connection to close checkpoints the WAL into the file
