"""What a database outage looks like from the code — the errors that mean "try again
later" — and how work waits one out.

``OperationalError`` and ``InterfaceError`` are what Django raises when the server is down,
restarting or out of connections, when a connection broke, or (SQLite) when the file is
locked past the busy timeout: nothing was done, and the same work may succeed later. Every
other database error is about the data itself and will fail again the same way.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from django.db import InterfaceError, OperationalError

logger = logging.getLogger(__name__)

T = TypeVar("T")

DATABASE_UNREACHABLE: tuple[type[Exception], ...] = (OperationalError, InterfaceError)

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
    while it raises one of :data:`DATABASE_UNREACHABLE`, for up to ``give_up_after`` seconds;
    then the last error is raised. ``what`` names the work in the log lines (one when the
    database is found unreachable, one when it is back). Other errors are raised at once."""
    started = time.monotonic()
    pause = first_pause
    failures = 0
    while True:
        try:
            found = await call()
        except DATABASE_UNREACHABLE as exc:
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


def caused_by_outage(error: BaseException) -> bool:
    """Whether ``error``, or an error it was raised from or during, is one of
    :data:`DATABASE_UNREACHABLE` (a framework may wrap it)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, DATABASE_UNREACHABLE):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False
