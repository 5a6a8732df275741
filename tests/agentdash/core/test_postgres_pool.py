"""The PostgreSQL pool's check before it hands a connection out (``core.postgresql``): a
connection given back a moment ago goes out as it is, one that sat longer is checked — a
round trip each, which every unit of work paid. On SQLite there is no pool: nothing to test."""

from __future__ import annotations

import time

import psycopg
import pytest
from django.db import connection

from agentdash.core.postgresql.base import RECENT_S, connection_check


def _killed_behind_its_back(conn: psycopg.Connection) -> None:
    """The server ends ``conn``'s backend (as a restart would); ``conn`` does not know yet."""
    pid = conn.info.backend_pid
    with psycopg.connect(conn.info.dsn, password=conn.info.password, autocommit=True) as other:
        # With a timeout the server answers once the backend has exited (PostgreSQL 14+).
        ended = other.execute("SELECT pg_terminate_backend(%s, 10000)", [pid]).fetchone()
        assert ended == (True,), ended


@pytest.mark.django_db
def test_a_connection_given_back_a_moment_ago_goes_out_unchecked() -> None:
    if connection.vendor != "postgresql" or connection.pool is None:
        return
    pool = connection.pool
    assert pool._check is connection_check  # the pool's own check, replaced
    conn = pool.getconn()
    pool.putconn(conn)
    assert getattr(conn, "agentdash_returned", None) is not None  # stamped as it went back
    _killed_behind_its_back(conn)
    conn.agentdash_returned = time.monotonic()  # a moment ago, however slow the kill
    connection_check(conn)  # no round trip: it does not find out
    conn.agentdash_returned = time.monotonic() - RECENT_S - 0.1
    with pytest.raises(psycopg.OperationalError):
        connection_check(conn)  # sat too long: checked, and found broken


@pytest.mark.django_db
def test_a_connection_never_given_back_is_checked() -> None:
    if connection.vendor != "postgresql" or connection.pool is None:
        return
    pool = connection.pool
    conn = pool.getconn()
    try:
        if hasattr(conn, "agentdash_returned"):
            delattr(conn, "agentdash_returned")  # as a connection the pool just opened
        _killed_behind_its_back(conn)
        with pytest.raises(psycopg.OperationalError):
            connection_check(conn)
    finally:
        pool.putconn(conn)  # broken: the pool drops it
