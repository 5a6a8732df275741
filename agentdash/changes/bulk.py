"""Many rows of a model written by one statement run for each (``executemany``), or on
PostgreSQL by ``COPY`` when they are many, without building model instances: the store's
batch writes (spans and their changes), where the ORM's per-row and per-field work was most
of their cost (docs/BENCHMARKS.md, "OTLP ingest"). It lives here, in the lowest app whose
writes need it."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import (
    BigIntegerField,
    CharField,
    DateTimeField,
    Field,
    ForeignKey,
    IntegerField,
    JSONField,
    Model,
    TextField,
)

Convert = Callable[[Any], Any]

# Fields whose ``get_db_prep_save`` hands a ``str``, an ``int`` or ``None`` to the driver
# as it is (their subclasses inherit that: PositiveBigIntegerField…).
_PLAIN_FIELDS = (CharField, TextField, IntegerField, BigIntegerField)
_PLAIN_VALUES = (str, int, type(None))

COPY_FROM = 16
"""On PostgreSQL, a plain insert (no ``update``, no ``add``) of at least this many rows is
one ``COPY … FROM STDIN``: the server parses and plans nothing per row, and the rows are
written out by the driver's C code — a flush of 250 spans cost half the client's CPU and a
third less of the server's than one ``INSERT`` run per row. Under it, ``executemany`` wins:
``COPY`` waits a round trip for the server to take the data (docs/BENCHMARKS.md)."""


@dataclass(frozen=True)
class EncodedJson:
    """A JSON field's value with its JSON text, encoded once by whoever made it: the text
    goes to the database as it is (SQLite stores it; PostgreSQL parses it into jsonb)."""

    value: Any
    text: str


def rows_insert(
    *,
    model: type[Model],
    fields: Sequence[str],
    rows: Iterable[Sequence[Any]],
    unique: Sequence[str] = (),
    update: Sequence[str] = (),
    add: Sequence[str] = (),
    as_given: bool = False,
) -> None:
    """Insert ``rows`` — each the values of ``fields`` (names or attnames), in that order —
    into ``model``'s table, with ``executemany`` of one ``INSERT``.

    With ``update``, a row whose ``unique`` fields (those of a unique constraint) match a
    stored row's updates that row's ``update`` fields instead (``ON CONFLICT … DO UPDATE``,
    on SQLite and PostgreSQL). Any other conflict raises ``IntegrityError``. Values are
    converted as ``save()`` converts them (``get_db_prep_save``: JSON to text on SQLite, to
    jsonb on PostgreSQL; a JSON field's value may come as :class:`EncodedJson`, whose text
    goes as it is on both); defaults and ``pre_save`` (``auto_now``…) are not applied, so
    every column without a database default needs its value. No signals are sent. With
    ``add``, such a row's ``add`` fields are increased by the new row's values instead
    (counters kept by the database: two writers at once both count). ``as_given``: every
    value is a ``str``, ``int``, ``bool``, ``float`` or ``None`` the driver takes as it is —
    nothing is checked or converted.

    Prefer plain inserts: on SQLite with foreign keys enforced, an upsert costs about three
    times a plain insert per row (docs/BENCHMARKS.md, "OTLP ingest"). On PostgreSQL, a
    plain insert of :data:`COPY_FROM` rows or more is a ``COPY`` (the same rows; a conflict
    raises ``IntegrityError`` the same; with DEBUG, ``connection.queries`` shows it)."""
    # The thread's connection itself: ``django.db.connection`` is a proxy, looked up anew on
    # each attribute read (a field's conversion reads several).
    connection = connections[DEFAULT_DB_ALIAS]
    columns, sql = _statement(
        model, tuple(fields), tuple(unique), tuple(update), tuple(add), connection.vendor
    )
    prepared: list[Any] = [row if as_given else list(row) for row in rows]
    if not prepared:
        return
    if any(len(row) != len(columns) for row in prepared):
        raise ValueError(f"a row's values do not match the {len(columns)} fields")
    for index, field in enumerate([] if as_given else columns):
        if _plain(field) and all(type(row[index]) in _PLAIN_VALUES for row in prepared):
            continue  # what the driver takes as it is: no call per value
        convert = _converter(field, connection)
        for row in prepared:
            row[index] = convert(row[index])
    if connection.vendor == "postgresql" and not (update or add) and len(prepared) >= COPY_FROM:
        _copy(connection, model, columns, prepared)
        return
    with connection.cursor() as cursor:
        cursor.executemany(sql, prepared)


def _copy(
    connection: BaseDatabaseWrapper,
    model: type[Model],
    columns: Sequence[Field[Any, Any]],
    rows: list[Any],
) -> None:
    """``rows`` (converted) into ``model``'s table by ``COPY … FROM STDIN`` (text format:
    the driver escapes each value; a JSON column takes its text)."""
    quote = connection.ops.quote_name
    names = ", ".join(quote(field.column) for field in columns)
    sql = f"COPY {quote(model._meta.db_table)} ({names}) FROM STDIN"
    connection.validate_no_broken_transaction()  # as Django's own statements do
    began = time.monotonic()
    try:
        # The driver's own cursor (Django has no COPY), its errors made Django's.
        with connection.cursor() as cursor, connection.wrap_database_errors:
            raw = cursor.cursor
            with raw.copy(sql) as copy:
                for row in rows:
                    copy.write_row(row)
    finally:
        if connection.queries_logged:  # shown with the statements run (DEBUG), as Django does
            took = f"{time.monotonic() - began:.3f}"
            connection.queries_log.append({"sql": f"{sql} -- {len(rows)} rows", "time": took})


@functools.lru_cache(maxsize=256)
def _statement(
    model: type[Model],
    fields: tuple[str, ...],
    unique: tuple[str, ...],
    update: tuple[str, ...],
    add: tuple[str, ...],
    vendor: str,
) -> tuple[list[Field[Any, Any]], str]:
    """The columns of ``fields`` and the ``INSERT`` of :func:`rows_insert` for them, made once
    per shape (a wide row's statement — a rollup's 85 columns, each named again in its
    ``DO UPDATE`` — took longer to write out than to run). By ``vendor``: how names are
    quoted and conflicts written is the backend's."""
    columns = [_field(model, name) for name in fields]
    quote = connections[DEFAULT_DB_ALIAS].ops.quote_name
    names = ", ".join(quote(field.column) for field in columns)
    values = ", ".join(["%s"] * len(columns))
    sql = f"INSERT INTO {quote(model._meta.db_table)} ({names}) VALUES ({values})"
    if update or add:
        table = quote(model._meta.db_table)
        keys = ", ".join(quote(_field(model, name).column) for name in unique)
        sets = [f"{c} = excluded.{c}" for c in (quote(_field(model, n).column) for n in update)]
        sets += [
            f"{c} = {table}.{c} + excluded.{c}"
            for c in (quote(_field(model, n).column) for n in add)
        ]
        sql += f" ON CONFLICT ({keys}) DO UPDATE SET {', '.join(sets)}"
    return columns, sql


def _converter(field: Field[Any, Any], connection: BaseDatabaseWrapper) -> Convert:
    """How one column's values become what the driver gets: what ``get_db_prep_save`` would
    make of them, without its chain of calls where the answer is known."""
    prep: Convert = lambda value: field.get_db_prep_save(value, connection)  # noqa: E731
    if isinstance(field, JSONField):

        def to_json(value: Any) -> Any:
            # Its text as it is: SQLite stores JSON as text, and PostgreSQL parses the text
            # (the driver sends a str untyped) into jsonb — not encoded once more.
            return value.text if isinstance(value, EncodedJson) else prep(value)

        return to_json
    if _plain(field):
        return lambda value: value if type(value) in _PLAIN_VALUES else prep(value)
    if isinstance(field, DateTimeField):  # often one moment for every row: converted once
        last: list[Any] = [None, None]

        def to_moment(value: Any) -> Any:
            if value is None or value is not last[0]:
                last[:] = [value, prep(value)]
            return last[1]

        return to_moment
    return prep


def _plain(field: Field[Any, Any]) -> bool:
    return isinstance(field, _PLAIN_FIELDS) or (
        isinstance(field, ForeignKey) and isinstance(field.target_field, _PLAIN_FIELDS)
    )


def _field(model: type[Model], name: str) -> Field[Any, Any]:
    field = model._meta.get_field(name)
    if not isinstance(field, Field):
        raise ValueError(f"{model.__name__}.{name} is not a column")
    return field
