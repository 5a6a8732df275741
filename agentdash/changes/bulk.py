"""Many rows of a model written by one statement run for each (``executemany``), without
building model instances: the store's batch writes (spans and their changes), where the
ORM's per-row and per-field work was most of their cost (docs/BENCHMARKS.md, "OTLP
ingest"). It lives here, in the lowest app whose writes need it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Field, Model


def rows_insert(
    *,
    model: type[Model],
    fields: Sequence[str],
    rows: Iterable[Sequence[Any]],
    unique: Sequence[str] = (),
    update: Sequence[str] = (),
) -> None:
    """Insert ``rows`` — each the values of ``fields`` (names or attnames), in that order —
    into ``model``'s table, with ``executemany`` of one ``INSERT``.

    With ``update``, a row whose ``unique`` fields (those of a unique constraint) match a
    stored row's updates that row's ``update`` fields instead (``ON CONFLICT … DO UPDATE``,
    on SQLite and PostgreSQL). Any other conflict raises ``IntegrityError``. Values are
    converted as ``save()`` converts them (``get_db_prep_save``: JSON to text on SQLite, to
    jsonb on PostgreSQL); defaults and ``pre_save`` (``auto_now``…) are not applied, so every
    column without a database default needs its value. No signals are sent."""
    columns = [_field(model, name) for name in fields]
    # The thread's connection itself: ``django.db.connection`` is a proxy, looked up anew on
    # each attribute read (a field's conversion reads several).
    connection = connections[DEFAULT_DB_ALIAS]
    prepared = [
        [
            field.get_db_prep_save(value, connection)
            for field, value in zip(columns, row, strict=True)
        ]
        for row in rows
    ]
    if not prepared:
        return
    quote = connection.ops.quote_name
    names = ", ".join(quote(field.column) for field in columns)
    values = ", ".join(["%s"] * len(columns))
    sql = f"INSERT INTO {quote(model._meta.db_table)} ({names}) VALUES ({values})"
    if update:
        keys = ", ".join(quote(_field(model, name).column) for name in unique)
        updated = [quote(_field(model, name).column) for name in update]
        sets = ", ".join(f"{column} = excluded.{column}" for column in updated)
        sql += f" ON CONFLICT ({keys}) DO UPDATE SET {sets}"
    with connection.cursor() as cursor:
        cursor.executemany(sql, prepared)


def _field(model: type[Model], name: str) -> Field[Any, Any]:
    field = model._meta.get_field(name)
    if not isinstance(field, Field):
        raise ValueError(f"{model.__name__}.{name} is not a column")
    return field
