"""Django's PostgreSQL backend, with its connection pool failing fast while the server is down.

A pool (``OPTIONS["pool"]``, psycopg_pool) lets a burst wait its turn for a connection, up to
the pool's ``timeout``. But while the server is down every request would wait that whole
timeout before its 503: the pool's idle connections are found broken, and the new ones it
keeps trying to open fail. Here a request waits for a pooled connection in short slices, and
between them asks whether the pool can connect at all — its last attempt to open a
connection failed, and none has succeeded since, with none idle: then it gives up at once
with ``PoolTimeout`` (an ``OperationalError`` to Django: an outage, ``core/outages.py``), and
so does every request after it at once, until the pool connects again (it retries every
half second). A burst against a healthy server waits as before.

With ``CONN_HEALTH_CHECKS`` the pool checks a connection before it hands it out, an empty
statement each time — a round trip on every unit of work of a run. A connection given back in
a clean state less than ``RECENT_S`` ago is handed out unchecked (:func:`connection_check`):
it answered a moment ago. The price: a server that went away within that second fails the
unit's first statement instead of the check, and the unit sees an outage (a page its 503, a
run's write waits it out and tries again) where the check would have found the connection
broken and opened another.

Selected by ``ENGINE = "agentdash.core.postgresql"`` (``agentdash.settings`` does it when the
pool is on); everything else is Django's backend unchanged.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

from django.db.backends.postgresql import base
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool, PoolTimeout
from psycopg_pool.base import AttemptWithBackoff

SLICE_S = 0.25
RETRY_EVERY_S = 0.5

# The pool retries a failed connection after 1, 2, 4, 8… s: after an outage of 10 s it may
# not try again for seconds after the server is back, and every request meanwhile is a 503.
# A refused connection costs nothing: try every half second (until ``reconnect_timeout``).
AttemptWithBackoff.INITIAL_DELAY = RETRY_EVERY_S
AttemptWithBackoff.DELAY_BACKOFF = 1.0

_seen: dict[int, tuple[int, int]] = {}  # pool id → (failed, made) connections when last looked
_failing: dict[int, bool] = {}
_lock = threading.Lock()


def pool_failing(pool: ConnectionPool) -> bool:
    """Whether ``pool`` can connect at all: ``False`` once an attempt succeeded after its
    last failure (the counters it keeps say which came last), or while it has idle ones."""
    stats = pool.get_stats()
    errors = stats.get("connections_errors", 0)
    made = stats.get("connections_num", 0) - errors  # the pool counts attempts, and failures
    with _lock:
        before = _seen.get(id(pool), (0, 0))
        if errors > before[0]:
            _failing[id(pool)] = True
        if made > before[1]:
            _failing[id(pool)] = False
        _seen[id(pool)] = (errors, made)
        failing = _failing.get(id(pool), False)
    return failing and stats.get("pool_available", 0) == 0


def _patient_getconn(pool: ConnectionPool) -> Any:
    take = pool.getconn

    def getconn(timeout: float | None = None) -> Any:
        deadline = time.monotonic() + (pool.timeout if timeout is None else timeout)
        while True:
            left = deadline - time.monotonic()
            try:
                if pool_failing(pool):  # known down: no wait at all
                    raise PoolTimeout("the database is unreachable: no connection can be made")
                return take(timeout=max(0.001, min(SLICE_S, left)))
            except PoolTimeout:
                if pool_failing(pool):
                    raise PoolTimeout(
                        "the database is unreachable: no connection can be made"
                    ) from None
                if time.monotonic() >= deadline:
                    raise

    return getconn


# A connection given back this recently goes out again unchecked; one that sat longer is
# checked, as before.
RECENT_S = 1.0
_RETURNED = "agentdash_returned"


def _stamping_putconn(pool: ConnectionPool) -> Any:
    give_back = pool.putconn

    def putconn(conn: Any) -> None:
        with contextlib.suppress(AttributeError):
            setattr(conn, _RETURNED, time.monotonic())
        give_back(conn)

    return putconn


def connection_check(conn: Any) -> None:
    """The pool's check before it hands ``conn`` out: none for a connection given back less
    than ``RECENT_S`` ago in a clean state; otherwise psycopg_pool's (``SELECT`` nothing)."""
    returned = getattr(conn, _RETURNED, None)
    if (
        returned is not None
        and time.monotonic() - returned < RECENT_S
        and not conn.closed
        and conn.info.transaction_status == TransactionStatus.IDLE
    ):
        return
    ConnectionPool.check_connection(conn)


class DatabaseWrapper(base.DatabaseWrapper):
    @property
    def pool(self) -> ConnectionPool | None:
        found = super().pool  # type: ignore[misc]  # not typed
        if found is not None and not getattr(found, "agentdash_patient", False):
            found.getconn = _patient_getconn(found)
            found.putconn = _stamping_putconn(found)
            if found._check is ConnectionPool.check_connection:  # CONN_HEALTH_CHECKS on
                found._check = connection_check
            found.agentdash_patient = True
        return found
