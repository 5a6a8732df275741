"""core.outages: which database errors are an outage (wait and try again) and which are
about the work itself (they would fail the same way again); waiting one out."""

from __future__ import annotations

import sqlite3

import psycopg
import pytest
from django.db import DataError, InterfaceError, OperationalError, connection

from agentdash.core.outages import caused_by_outage, is_outage, until_reachable


def django_error(driver: Exception, cls: type[Exception] = OperationalError) -> Exception:
    """``driver``'s error as Django raises it: its own class, raised from the driver's."""
    try:
        try:
            raise driver
        except Exception as exc:
            raise cls(str(exc)) from exc
    except Exception as wrapped:
        return wrapped


@pytest.mark.parametrize(
    ("driver", "outage"),
    [
        (psycopg.OperationalError("connection failed: Connection refused"), True),  # no state
        (psycopg.errors.lookup("08006")("connection failure"), True),
        (psycopg.errors.lookup("57P01")("terminating connection: administrator command"), True),
        (psycopg.errors.lookup("57P03")("the database system is starting up"), True),
        (psycopg.errors.lookup("53300")("too many connections"), True),
        (psycopg.errors.lookup("40P01")("deadlock detected"), True),
        (psycopg.errors.lookup("54000")("index row size exceeds maximum"), False),
        (psycopg.errors.lookup("42P01")("relation does not exist"), False),
        (sqlite3.OperationalError("database is locked"), True),
        (sqlite3.OperationalError("unable to open database file"), True),
        (sqlite3.OperationalError("no such table: runs_run"), False),
    ],
    ids=str,
)
def test_which_operational_errors_are_outages(driver: Exception, outage: bool) -> None:
    assert is_outage(django_error(driver)) is outage
    assert caused_by_outage(RuntimeError("while rendering").with_traceback(None)) is False


def test_other_errors_and_wrapped_ones() -> None:
    assert is_outage(InterfaceError("connection already closed"))
    assert not is_outage(DataError("A string literal cannot contain NUL (0x00) characters."))
    assert not is_outage(ValueError("x"))
    try:
        try:
            raise django_error(psycopg.OperationalError("server closed the connection"))
        except OperationalError as exc:
            raise RuntimeError("while rendering the page") from exc
    except RuntimeError as wrapped:
        assert caused_by_outage(wrapped)


@pytest.mark.django_db
def test_a_real_missing_table_is_not_an_outage() -> None:
    with pytest.raises(Exception) as refused, connection.cursor() as cursor:
        cursor.execute("SELECT * FROM no_such_table_here")
    assert not caused_by_outage(refused.value)


async def test_until_reachable_waits_an_outage_out_and_raises_anything_else() -> None:
    calls: list[int] = []

    async def down_twice() -> str:
        calls.append(1)
        if len(calls) <= 2:
            raise django_error(psycopg.OperationalError("connection refused"))
        return "done"

    assert await until_reachable(down_twice, what="the test", first_pause=0.01) == "done"
    assert len(calls) == 3

    async def missing_table() -> None:
        raise django_error(sqlite3.OperationalError("no such table: x"))

    with pytest.raises(OperationalError):
        await until_reachable(missing_table, what="the test", first_pause=0.01)

    async def never_back() -> None:
        raise django_error(psycopg.OperationalError("connection refused"))

    with pytest.raises(OperationalError):
        await until_reachable(never_back, what="the test", give_up_after=0.05, first_pause=0.01)
