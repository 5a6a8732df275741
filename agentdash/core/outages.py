"""What a database outage looks like from the code — the errors that mean "try again
later" — and how work waits one out.

Django raises ``OperationalError`` or ``InterfaceError`` when the server is down, restarting
or out of connections, when a connection broke, or (SQLite) when the file is locked past the
busy timeout: nothing was done, and the same work may succeed later. But some
``OperationalError``s are about the work itself — a program limit, a table that does not
exist — and would fail the same way again: :func:`is_outage` tells them apart. Other
database errors (``DataError``, ``IntegrityError``, …) are never outages.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

from django.db import InterfaceError, OperationalError

logger = logging.getLogger(__name__)

T = TypeVar("T")

DATABASE_UNREACHABLE: tuple[type[Exception], ...] = (OperationalError, InterfaceError)
"""The error classes an outage raises (for ``except``; then ask :func:`is_outage`)."""

_TRANSIENT_CLASSES = frozenset({"08", "40", "53", "57"})
_SQLITE_OUTAGES = ("locked", "unable to open", "disk i/o", "busy")

GIVE_UP_AFTER_S = 600.0
"""How long :func:`until_reachable` keeps trying by default."""


async def until_reachable(
    call: Callable[[], Awaitable[T]],
    *,
    what: str,
    give_up_after: float = GIVE_UP_AFTER_S,
    first_pause: float = 0.5,
    max_pause: float = 5.0,
) -> T:
    """``await call()``, and again — pauses growing from ``first_pause`` to ``max_pause`` —
    while it raises an outage (:func:`caused_by_outage`), for up to ``give_up_after`` seconds;
    then the last error is raised. ``what`` names the work in the log lines (one when the
    database is found unreachable, one when it is back). Other errors are raised at once."""
    started = time.monotonic()
    pause = first_pause
    failures = 0
    while True:
        try:
            found = await call()
        except DATABASE_UNREACHABLE as exc:
            if not caused_by_outage(exc):
                raise
            failures += 1
            waited = time.monotonic() - started
            if waited >= give_up_after:
                logger.error("%s: the database is still unreachable after %.0f s", what, waited)
                raise
            if failures == 1:
                logger.warning("%s: the database is unreachable (%s); trying again", what, exc)
            await asyncio.sleep(pause)
            pause = min(pause * 2, max_pause)
            continue
        if failures:
            logger.warning(
                "%s: done after the database came back (%.1f s)", what, time.monotonic() - started
            )
        return found


def is_outage(error: BaseException) -> bool:
    """Whether ``error`` means the database could not serve the work right now: an
    ``InterfaceError``; an ``OperationalError`` from PostgreSQL with no SQLSTATE (the
    connection failed before the server said anything) or one of class 08 (connection), 40
    (a deadlock or serialization failure), 53 (out of resources: connections, memory, disk)
    or 57 (shutting down, starting up); from SQLite, a locked, unopenable or unreadable
    file."""
    if isinstance(error, InterfaceError):
        return True
    if not isinstance(error, OperationalError):
        return False
    driver = error.__cause__
    sqlstate = getattr(driver, "sqlstate", None)
    if isinstance(driver, sqlite3.Error):
        text = str(driver).lower()
        return any(sign in text for sign in _SQLITE_OUTAGES)
    return sqlstate is None or str(sqlstate)[:2] in _TRANSIENT_CLASSES


def caused_by_outage(error: BaseException) -> bool:
    """Whether ``error``, or an error it was raised from or during, :func:`is_outage` (a
    framework may wrap it)."""
    return any(is_outage(found) for found in error_chain(error))


def error_chain(error: BaseException) -> Iterator[BaseException]:
    """``error``, then what it was raised from or during, and so on (each once)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        yield current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
