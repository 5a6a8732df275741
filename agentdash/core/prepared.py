"""Hot reads built by the ORM once, then run as their SQL with other values.

Building a query costs the ORM far more than running it on SQLite: on a 2-core AMD EPYC, a
``GROUP BY`` over a run's spans took 430 µs through a ``QuerySet`` and 16 µs as its SQL
(docs/BENCHMARKS.md, "Queries built once"). A run's path makes dozens of such small reads.
:class:`PreparedQuery` builds its query once per *shape* of its arguments (which are
lists, and how long), keeps the SQL, the parameters and the compiler, and from then on puts
the arguments in their places, runs the SQL and makes the rows what the ``QuerySet`` itself
yields (instances, dicts, tuples, flat values: the queryset's own iterable, with its
compiler's converters).

The places are found by building the query twice with two sets of stand-in values: a
parameter that differs between the two builds, and is the same argument's stand-in in both,
is that argument's place; the others are the query's constants. A query whose SQL does not
take its arguments as given (a lookup that changes the value, such as ``icontains``; a
value the ORM answers without SQL) is left to the ORM, built at every call as before — the
same rows, only not faster (logged once).

What the query depends on must all be arguments: a value read inside the build (the time,
a setting) is frozen into the SQL of its shape. Arguments are ints and strings, or lists,
tuples or sets of them (a set's order is kept as iterated).
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from django.core.exceptions import EmptyResultSet, FullResultSet
from django.db import connections, router, transaction
from django.db.models import QuerySet
from django.db.models.sql.compiler import SQLCompiler
from django.db.transaction import TransactionManagementError

logger = logging.getLogger(__name__)

T = TypeVar("T")
Key = tuple[tuple[type, int | None], ...]  # per argument: int or str, and a list's length

MAX_SHAPES = 256
"""Shapes kept per query, at most (one per length of a list argument), the least recently
used forgotten first."""
_STAND_INS = ((1_000, 1), (17_000, 3))
"""The two builds' stand-in ints: from where, by what step. Inside every integer field's
range, even a ``PositiveSmallIntegerField``'s (a value outside it would make the ORM answer
without SQL); steps that differ, so that a value the build computes from an argument
(``n + 1``) is never another argument's stand-in in both builds. A query takes at most
5,000 stand-ins; one with more is left to the ORM."""
_LIMIT = 5_000
_STRING = "\ue000%_\\{}"
"""A stand-in string: with the characters a pattern lookup escapes (``%``, ``_``, ``\\``),
so that a lookup that would change a value is seen changing its stand-in."""
_INT64 = range(-(2**63), 2**63)


class NotPreparable(TypeError):
    """An argument of a kind a prepared query does not take (``None``, a bool, a float, a
    list of ints and strings together)."""


@dataclass(frozen=True)
class _Shape:
    sql: str
    params: tuple[Any, ...]
    places: tuple[tuple[int, int, int | None], ...]  # (param index, argument, item or None)
    # (argument, item) → the range of the integer field it is compared with: a value
    # outside it the ORM answers without SQL (no row, or the condition dropped).
    ranges: dict[tuple[int, int | None], range] = field(repr=False)
    queryset: QuerySet[Any] = field(repr=False)
    compiler: SQLCompiler = field(repr=False)


_EMPTY = "empty"  # the shape matches nothing (a list it is ANDed with is empty): no SQL
_ORM = "orm"  # the shape's SQL does not take its arguments as given: the ORM every time


class _Answered:
    """The kept query, its compiler handing back rows already fetched."""

    def __init__(self, query: Any, compiler: SQLCompiler) -> None:
        self._query = query
        self._compiler = compiler

    def __getattr__(self, name: str) -> Any:
        return getattr(self._query, name)

    def get_compiler(self, *args: Any, **kwargs: Any) -> SQLCompiler:
        return self._compiler


class _Prepared(ABC):
    """The SQL of ``build(*args)``'s query, made once per shape of the arguments."""

    def __init__(self, build: Callable[..., QuerySet[Any]]) -> None:
        self._build = build
        self._shapes: OrderedDict[Key, _Shape | str] = OrderedDict()
        self._lock = threading.Lock()

    def _shape(self, given: list[Any]) -> _Shape | str:
        """The kept SQL of the shape of ``given`` (checked arguments), made if new; or
        ``_EMPTY``, or ``_ORM`` (also for a value SQL cannot hold, or one the ORM answers
        without SQL)."""
        if any(_beyond_sql(value) for value in given):
            return _ORM  # the ORM's own answer to what SQL cannot hold
        key = tuple(map(_kind, given))
        with self._lock:
            shape = self._shapes.get(key)
            if shape is None:
                shape = self._shapes[key] = self._prepare(key)
                if len(self._shapes) > MAX_SHAPES:  # lists of ever new lengths
                    self._shapes.popitem(last=False)
            else:
                self._shapes.move_to_end(key)
        if isinstance(shape, _Shape) and shape.ranges and not _in_ranges(shape.ranges, given):
            return _ORM
        return shape

    @staticmethod
    def _params(shape: _Shape, given: list[Any]) -> list[Any]:
        params = list(shape.params)
        for index, argument, item in shape.places:
            value = given[argument]
            params[index] = value[item] if item is not None else value
        return params

    def _prepare(self, key: Key) -> _Shape | str:
        count = sum(1 if size is None else size for _, size in key)
        if count > _LIMIT:
            return self._left(key, f"{count} values")
        (first, a), (_, b) = (_stand_ins(key, *how) for how in _STAND_INS)
        try:
            queryset, compiler, sql, params = self._compiled(a)
            _, _, sql_b, params_b = self._compiled(b)
        except EmptyResultSet:
            if any(size == 0 for _, size in key):
                return _EMPTY
            return self._left(key, "the ORM answers it without SQL")
        except Exception as error:  # whatever it is, the ORM says it at the call
            return self._left(key, repr(error))
        if sql != sql_b or len(params) != len(params_b):
            return self._left(key, "its SQL depends on the values")
        places = []
        for index, (value_a, value_b) in enumerate(zip(params, params_b, strict=True)):
            if value_a == value_b and type(value_a) is type(value_b):
                continue  # a constant of the query
            place = first.get(value_a) if isinstance(value_a, int | str) else None
            if place is None or _stand_in_at(place, b) != value_b:
                return self._left(key, f"a value changed on its way to the SQL: {value_a!r}")
            places.append((index, *place))
        if {(argument, item) for _, argument, item in places} != set(first.values()):
            return self._left(key, "a value does not reach the SQL")
        ranges = _integer_ranges(queryset, first)
        compiler.connection = None  # type: ignore[assignment]  # (the builder's: not kept)
        return _Shape(
            sql=sql, params=params, places=tuple(places), ranges=ranges, queryset=queryset,
            compiler=compiler,
        )  # fmt: skip

    @abstractmethod
    def _compiled(self, args: list[Any]) -> tuple[QuerySet[Any], SQLCompiler, str, tuple[Any, ...]]:
        """``build(*args)``, its compiler, its SQL and parameters (a kind's own)."""

    def _left(self, key: Key, why: str) -> str:
        logger.warning("a query of %s is left to the ORM (%s): %s", self._build, key, why)
        return _ORM


class PreparedQuery(_Prepared, Generic[T]):
    """``build(*args)`` (a ``QuerySet``), its SQL made once per shape of the arguments."""

    def rows(self, *args: int | str | Collection[int | str]) -> list[T]:
        """What ``list(build(*args))`` gives, the query built only for a new shape. Raises
        :class:`NotPreparable` for an argument of a kind not taken."""
        given = [_argument(value) for value in args]
        shape = self._shape(given)
        if shape == _EMPTY:
            return []
        if not isinstance(shape, _Shape):
            return list(self._build(*given))
        connection = connections[shape.queryset.db]
        held = shape.queryset.query.select_for_update
        if held and connection.features.has_select_for_update and connection.get_autocommit():
            # As the ORM says it (it checks when it builds: here the SQL is built already).
            raise TransactionManagementError(
                "select_for_update cannot be used outside of a transaction."
            )
        with connection.cursor() as cursor:
            cursor.execute(shape.sql, self._params(shape, given))
            fetched = cursor.fetchall()
        if shape.compiler.has_extra_select:  # columns only ordered by: cut, as the ORM does
            fetched = [row[: shape.compiler.col_count] for row in fetched]
        # The queryset's own iterable makes the rows, from a copy of the kept compiler that
        # hands back what was fetched instead of running its SQL again.
        compiler = object.__new__(type(shape.compiler))
        compiler.__dict__.update(shape.compiler.__dict__)
        compiler.connection = connection  # this thread's (its converters ask it)
        compiler.execute_sql = lambda *a, **k: [fetched]  # type: ignore[assignment]
        answered: QuerySet[Any] = object.__new__(type(shape.queryset))
        answered.__dict__.update(shape.queryset.__dict__)
        # (Not through the ``query`` setter: it would make a values query yield dicts.)
        answered.__dict__["_query"] = _Answered(shape.queryset.query, compiler)
        return list(answered._iterable_class(answered))  # type: ignore[call-overload]

    def _compiled(self, args: list[Any]) -> tuple[QuerySet[Any], SQLCompiler, str, tuple[Any, ...]]:
        queryset = self._build(*args)
        if getattr(queryset, "_prefetch_related_lookups", ()):  # (prefetches: more queries)
            raise ValueError("a query with prefetch_related")
        compiler = queryset.query.get_compiler(using=queryset.db)
        sql, params = compiler.as_sql()  # (it also sets what the iterables read)
        return queryset, compiler, sql, tuple(params)


class PreparedUpdate(_Prepared):
    """An ``UPDATE`` of ``fields`` of the rows ``build(*args)`` selects (a filter of one
    model's table, no join), its SQL made once per shape of the arguments. The new values
    are converted as ``save()`` converts them; ``None`` writes ``NULL``."""

    def __init__(self, build: Callable[..., QuerySet[Any]], *, fields: Sequence[str]) -> None:
        super().__init__(build)
        self._names = tuple(fields)

    def update(self, values: Sequence[Any], *args: int | str | Collection[int | str]) -> int:
        """Set ``fields`` to ``values`` (in that order) on the rows ``build(*args)``
        selects; how many rows matched (as ``QuerySet.update``)."""
        if len(values) != len(self._names):
            raise ValueError(f"{len(self._names)} values, one per field, not {len(values)}")
        given = [_argument(value) for value in args]
        shape = self._shape(given)
        if shape == _EMPTY:
            return 0
        if not isinstance(shape, _Shape) or any(_not_plain(value) for value in values):
            return self._build(*given).update(**dict(zip(self._names, values, strict=True)))
        alias = router.db_for_write(shape.queryset.model)
        connection = connections[alias]
        model = shape.queryset.model
        new = [
            model._meta.get_field(name).get_db_prep_save(value, connection=connection)
            for name, value in zip(self._names, values, strict=True)
        ]
        params = self._params(shape, given)
        params[: len(new)] = new
        with transaction.mark_for_rollback_on_error(using=alias), connection.cursor() as cursor:
            cursor.execute(shape.sql, params)
            return int(cursor.rowcount)

    def _compiled(self, args: list[Any]) -> tuple[QuerySet[Any], SQLCompiler, str, tuple[Any, ...]]:
        queryset = self._build(*args)
        query = queryset.query
        if sum(1 for alias in query.alias_map if query.alias_refcount[alias]) > 1:
            raise ValueError("an update of rows selected through a join")
        meta = queryset.model._meta
        if any(hasattr(meta.get_field(name), "get_placeholder") for name in self._names):
            raise ValueError("a field with a placeholder of its own")
        compiler = query.get_compiler(using=router.db_for_write(queryset.model))
        quote = compiler.quote_name_unless_alias
        sets = ", ".join(f"{quote(meta.get_field(name).column)} = %s" for name in self._names)
        sql = f"UPDATE {quote(meta.db_table)} SET {sets}"
        try:
            where, params = compiler.compile(query.where)
        except FullResultSet:  # every row
            return queryset, compiler, sql, ()
        # The SET's places come first: constants of the kept SQL, replaced at each update.
        nones = (None,) * len(self._names)
        return queryset, compiler, f"{sql} WHERE {where}", (*nones, *params)


def _stand_ins(
    key: Key, start: int, step: int
) -> tuple[dict[Any, tuple[int, int | None]], list[Any]]:
    """Stand-ins for arguments of shape ``key``, counted from ``start`` by ``step``: value →
    (argument, item), and the arguments."""
    places: dict[Any, tuple[int, int | None]] = {}
    args: list[Any] = []
    number = start
    for argument, (kind, size) in enumerate(key):
        values = []
        for item in [None] if size is None else range(size):
            value = number if kind is int else _STRING.format(number)
            places[value] = (argument, item)
            values.append(value)
            number += step
        args.append(values[0] if size is None else values)
    return places, args


def _integer_ranges(
    queryset: QuerySet[Any], stand_ins: dict[Any, tuple[int, int | None]]
) -> dict[tuple[int, int | None], range]:
    """For each int stand-in compared with an integer field in the query's conditions, that
    field's range (``connection.ops.integer_field_range``)."""
    ops = connections[queryset.db].ops
    found: dict[tuple[int, int | None], range] = {}
    nodes = [queryset.query.where]
    while nodes:
        node = nodes.pop()
        nodes.extend(getattr(node, "children", ()))
        rhs, lhs = getattr(node, "rhs", None), getattr(node, "lhs", None)
        values = rhs if isinstance(rhs, list | tuple | set | frozenset) else [rhs]
        places = [stand_ins[v] for v in values if type(v) is int and v in stand_ins]
        if not places or lhs is None:
            continue
        try:
            low, high = ops.integer_field_range(lhs.output_field.get_internal_type())
        except (AttributeError, KeyError):
            continue  # not an integer field
        bounds = range(-(2**63) if low is None else low, 2**63 if high is None else high + 1)
        for place in places:
            found[place] = bounds
    return found


def _in_ranges(ranges: dict[tuple[int, int | None], range], given: list[Any]) -> bool:
    for (argument, item), bounds in ranges.items():
        value = given[argument] if item is None else given[argument][item]
        if value not in bounds:
            return False
    return True


def _not_plain(value: Any) -> bool:
    """A value an update must leave to the ORM: an expression, a model instance."""
    return hasattr(value, "resolve_expression") or hasattr(value, "prepare_database_save")


def _stand_in_at(place: tuple[int, int | None], args: list[Any]) -> Any:
    argument, item = place
    return args[argument] if item is None else args[argument][item]


def _beyond_sql(value: Any) -> bool:
    if isinstance(value, list):
        return any(_beyond_sql(v) for v in value)
    return isinstance(value, int) and value not in _INT64


def _kind(value: Any) -> tuple[type, int | None]:
    if isinstance(value, list):
        kinds = {type(v) for v in value}
        if len(kinds) > 1:
            raise NotPreparable(f"a list of ints or of strings, not of both: {value!r}")
        return (kinds.pop() if kinds else int, len(value))
    return (type(value), None)


def _argument(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        raise NotPreparable(f"an argument must be an int or a str, or a list of them: {value!r}")
    if isinstance(value, int | str):
        return int(value) if isinstance(value, int) else str(value)
    if isinstance(value, list | tuple | set | frozenset):
        return [_argument(v) for v in value]
    raise NotPreparable(f"an argument must be an int or a str, or a list of them: {value!r}")
