"""Reads of what model calls used and cost: the price table, and totals per run, per session
and per list of sessions — each one aggregate query over the spans' usage columns, grouped by
model, priced from the table as it is when read (agentdash.spans.usage)."""

from __future__ import annotations

import contextlib
import threading
from collections import namedtuple
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from django.db import connections
from django.db.models import Count, Q, QuerySet, Sum

from agentdash.core.prepared import PreparedQuery
from agentdash.spans.models import ModelPrice, Span
from agentdash.spans.usage import PriceBook, Totals

MODEL_CALLS = Q(tokens_in__isnull=False) | Q(tokens_out__isnull=False)
"""The spans that count: model calls. The same condition as the ``span_usage`` index's, so
that a total reads that index alone."""

_SUMS = {
    "tokens_in": Sum("tokens_in"),
    "tokens_out": Sum("tokens_out"),
    "tokens_cached": Sum("tokens_cached"),
    "tokens_thinking": Sum("tokens_thinking"),
    "calls": Count("id"),
}


_shared = threading.local()


_PRICE_FIELDS = (
    "model", "match", "input_per_mtok", "output_per_mtok", "cached_input_per_mtok",
    "thinking_per_mtok", "as_of", "edited_on",
)  # fmt: skip
"""What costs read of a price row (``usage.Price``): read as tuples, not model instances —
the table is read at every flush."""


PriceRow = namedtuple("PriceRow", _PRICE_FIELDS)  # type: ignore[misc]
"""A price row as costs read it (``usage.Price``)."""


@dataclass(frozen=True)
class _Statement:
    sql: str
    converters: dict[int, tuple[list[Any], Any]]  # column → (converters, its expression)


class _PriceTable:
    """The price table's rows as read last, by what the database handed back: each read
    fetches the rows as they are (always fresh, one query), and makes them price rows again
    only when they changed — making them (a ``Decimal`` per amount, rounded to its field)
    costs several times the query, and every flush that stores a model call reads the
    table."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._statements: dict[str, _Statement] = {}  # by the backend's vendor
        self._read: tuple[tuple[Any, ...], list[Any]] | None = None

    def rows(self) -> list[Any]:
        connection = connections[ModelPrice.objects.db]
        statement = self._statements.get(connection.vendor) or self._statement(connection)
        with connection.cursor() as cursor:
            cursor.execute(statement.sql)
            fetched = tuple(map(tuple, cursor.fetchall()))
        with self._lock:
            read = self._read
        if read is not None and read[0] == fetched:
            return read[1]
        made = [PriceRow(*self._converted(row, statement, connection)) for row in fetched]
        with self._lock:
            self._read = (fetched, made)
        return made

    def _statement(self, connection: Any) -> _Statement:
        """The table's query (in the order its model reads it) and its columns' converters,
        as the ORM makes them: a row made here is the row the ORM would make."""
        query = ModelPrice.objects.values_list(*_PRICE_FIELDS).order_by("model", "pk").query
        compiler = query.get_compiler(connection=connection)
        sql, _ = compiler.as_sql()
        converters = compiler.get_converters([column for column, _, _ in compiler.select])
        statement = _Statement(sql=sql, converters=converters)
        self._statements[connection.vendor] = statement
        return statement

    @staticmethod
    def _converted(row: tuple[Any, ...], statement: _Statement, connection: Any) -> list[Any]:
        values = list(row)
        for index, (converters, expression) in statement.converters.items():
            for convert in converters:
                values[index] = convert(values[index], expression, connection)
        return values


_price_table = _PriceTable()


def price_book() -> PriceBook:
    """The price table as it is when first asked (one query, only if asked; the table is
    small) — inside :func:`prices_shared`, the one book of that unit of work."""
    shared: PriceBook | None = getattr(_shared, "book", None)
    if shared is not None:
        return shared
    return PriceBook(_price_table.rows)


@contextlib.contextmanager
def prices_shared() -> Iterator[PriceBook]:
    """One price book for everything this thread prices inside (a unit of work, such as a
    flush that prices spans and runs): the table read once, at the first question."""
    if getattr(_shared, "book", None) is not None:  # already inside one: that one
        yield _shared.book
        return
    _shared.book = book = price_book()
    try:
        yield book
    finally:
        _shared.book = None


def _groups(rows: QuerySet[Span], *by: str) -> QuerySet[Span, dict[str, Any]]:
    return rows.filter(MODEL_CALLS).values(*by, "usage_model").annotate(**_SUMS).order_by()


_SESSION_GROUPS: PreparedQuery[dict[str, Any]] = PreparedQuery(
    lambda session_id: _groups(Span.objects.filter(session_id=session_id), "run_id")
)
_RUNS_GROUPS: PreparedQuery[dict[str, Any]] = PreparedQuery(
    lambda session_ids, run_ids: _groups(
        Span.objects.filter(session_id__in=session_ids, run_id__in=run_ids), "run_id"
    )
)
_SESSIONS_GROUPS: PreparedQuery[dict[str, Any]] = PreparedQuery(
    lambda session_ids: _groups(Span.objects.filter(session_id__in=session_ids), "session_id")
)


def session_usage(
    *, session_id: str, prices: PriceBook | None = None
) -> tuple[Totals, dict[int, Totals]]:
    """The session's totals and those of each of its runs that made model calls, by run id,
    from one read (so they agree: the session's is the sum of its runs' plus that of spans
    of no run)."""
    prices = prices or price_book()
    session = Totals()
    runs: dict[int, Totals] = {}
    for group in _SESSION_GROUPS.rows(session_id):
        session.add_group(group, prices)
        if group["run_id"] is not None:
            runs.setdefault(group["run_id"], Totals()).add_group(group, prices)
    return session, runs


def runs_usage(
    *, session_ids: Iterable[str], run_ids: Iterable[int], prices: PriceBook | None = None
) -> dict[int, Totals]:
    """The totals of the runs ``run_ids`` (of the sessions ``session_ids``) that made model
    calls, by run id, in one query."""
    run_ids = set(run_ids)
    if not run_ids:
        return {}
    prices = prices or price_book()
    found: dict[int, Totals] = {}
    for group in _RUNS_GROUPS.rows(sorted(set(session_ids)), sorted(run_ids)):
        found.setdefault(group["run_id"], Totals()).add_group(group, prices)
    return found


def sessions_usage(
    *, session_ids: Iterable[str], prices: PriceBook | None = None
) -> dict[str, Totals]:
    """The totals of each of the sessions ``session_ids`` that made model calls, by session
    id, in one query (for a list of sessions)."""
    session_ids = set(session_ids)
    if not session_ids:
        return {}
    prices = prices or price_book()
    found: dict[str, Totals] = {}
    for group in _SESSIONS_GROUPS.rows(sorted(session_ids)):
        found.setdefault(group["session_id"], Totals()).add_group(group, prices)
    return found
