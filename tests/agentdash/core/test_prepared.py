"""A prepared query gives what its ``QuerySet`` gives — instances, related rows, dicts,
tuples, flat and named rows, groups — building the query once per shape of its arguments,
and leaves to the ORM what its SQL cannot take as given. Run on SQLite and, in the
PostgreSQL pass, on PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import DatabaseError, connection, transaction
from django.db.models import Count, F, Max, Q, QuerySet
from django.db.transaction import TransactionManagementError
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agentdash.agent_sessions.models import AgentSession
from agentdash.core import prepared
from agentdash.core.prepared import NotPreparable, PreparedQuery, PreparedUpdate
from agentdash.runs.models import Run
from tests.agentdash.hostile import NUL, SURROGATE
from tests.agentdash.stored import session_make

pytestmark = pytest.mark.django_db


def run_make(session: AgentSession, n: int, **fields: Any) -> Run:
    return Run.objects.create(
        session=session,
        agent_name=fields.pop("agent_name", f"agent-{n % 2}"),
        invocation_id=f"{session.pk}-{n}",
        message={"role": "user", "parts": [{"text": f"message {n}", "n": n}]},
        attempt=fields.pop("attempt", n % 3),
        cancel_requested=fields.pop("cancel_requested", n % 2 == 0),
        **fields,
    )


@pytest.fixture
def runs() -> list[Run]:
    sessions = [session_make(f"s{i}") for i in range(3)]
    return [run_make(sessions[n % 3], n) for n in range(9)]


class Counted:
    """A build that counts how often it is called."""

    def __init__(self, build: Callable[..., QuerySet[Any]]) -> None:
        self.build = build
        self.calls = 0

    def __call__(self, *args: Any) -> QuerySet[Any]:
        self.calls += 1
        return self.build(*args)


def fields_of(run: Run) -> dict[str, Any]:
    return {f.attname: getattr(run, f.attname) for f in Run._meta.concrete_fields}


def test_instances_are_the_orm_ones_with_their_fields_converted(runs: list[Run]) -> None:
    query: PreparedQuery[Run] = PreparedQuery(
        lambda session_ids, ids: Run.objects.filter(session_id__in=session_ids, pk__in=ids)
    )
    ids = [runs[0].pk, runs[3].pk, runs[4].pk]
    got = query.rows(["s0", "s1"], ids)
    expected = list(Run.objects.filter(session_id__in=["s0", "s1"], pk__in=ids))
    assert [fields_of(r) for r in got] == [fields_of(r) for r in expected]
    assert len(got) == 3  # s0's runs 0 and 3, s1's run 4
    first = got[0]
    assert first.message["parts"][0]["n"] in (0, 3, 4)  # JSON decoded
    assert first.created_at.tzinfo is not None  # an aware datetime
    assert isinstance(first.cancel_requested, bool)
    assert first._state.adding is False and first._state.db == "default"
    first.error = "saved"
    first.save(update_fields=["error"])  # an instance as any other
    assert Run.objects.get(pk=first.pk).error == "saved"


def test_related_rows_come_with_the_row(runs: list[Run]) -> None:
    query: PreparedQuery[Run] = PreparedQuery(
        lambda run_id: Run.objects.select_related("session").filter(pk=run_id)
    )
    query.rows(runs[1].pk)  # the shape built
    with CaptureQueriesContext(connection) as queries:
        (run,) = query.rows(runs[2].pk)
        assert run.session.app_name == "app" and run.session.pk == "s2"
    assert len(queries) == 1


@pytest.mark.parametrize(
    "build",
    [
        lambda ids: Run.objects.filter(pk__in=ids).order_by("pk").values("pk", "agent_name"),
        lambda ids: Run.objects.filter(pk__in=ids).order_by("pk").values_list("pk", "message"),
        lambda ids: (
            Run.objects.filter(pk__in=ids).order_by("-pk").values_list("invocation_id", flat=True)
        ),
        lambda ids: (
            Run.objects.filter(pk__in=ids).order_by("pk").values_list("pk", "attempt", named=True)
        ),
        lambda ids: (
            Run.objects.filter(pk__in=ids)
            .values("agent_name")
            .annotate(n=Count("id"), latest=Max("created_at"))
            .order_by("agent_name")
        ),
        lambda ids: (
            Run.objects.filter(Q(pk__in=ids) | Q(agent_name="none"))
            .order_by("pk")
            .values_list("pk", "cancel_requested")[:2]
        ),
    ],
    ids=["values", "values_list", "flat", "named", "groups", "or and a slice"],
)
def test_each_kind_of_row_is_the_orm_one(
    runs: list[Run], build: Callable[[list[int]], QuerySet[Any]]
) -> None:
    query: PreparedQuery[Any] = PreparedQuery(build)
    for ids in ([r.pk for r in runs[:5]], [r.pk for r in runs[4:9]], [runs[8].pk, 10**6]):
        assert query.rows(ids) == list(build(ids))


def test_built_once_per_shape(runs: list[Run]) -> None:
    build = Counted(lambda session_id, ids: Run.objects.filter(session_id=session_id, pk__in=ids))
    query: PreparedQuery[Run] = PreparedQuery(build)
    query.rows("s0", [runs[0].pk])
    built = build.calls
    assert built == 2  # the two stand-in builds
    for run in runs:
        got = query.rows(run.session_id, [run.pk])
        assert [r.pk for r in got] == [run.pk]
    assert build.calls == built  # the same shape: SQL kept
    assert [r.pk for r in query.rows("s0", [runs[0].pk, runs[3].pk])] == sorted(
        [runs[0].pk, runs[3].pk], key=lambda pk: -pk
    )  # the model's ordering (newest first)
    assert build.calls == built + 2  # a list of another length: another shape


def test_an_empty_list_asks_nothing(runs: list[Run]) -> None:
    query: PreparedQuery[Run] = PreparedQuery(lambda ids: Run.objects.filter(pk__in=ids))
    with CaptureQueriesContext(connection) as queries:
        assert query.rows([]) == [] == query.rows(set())
    assert len(queries) == 0
    # An empty list OR-ed with another condition is dropped, as the ORM drops it.
    either: PreparedQuery[int] = PreparedQuery(
        lambda ids, name: (
            Run.objects.filter(Q(pk__in=ids) | Q(agent_name=name))
            .order_by("pk")
            .values_list("pk", flat=True)
        )
    )
    assert either.rows([], "agent-1") == [r.pk for r in runs if r.agent_name == "agent-1"]


def test_ints_and_strings_in_one_query_and_constants_kept(runs: list[Run]) -> None:
    # 1000 and 17000 are the stand-ins' first values: a constant equal to one stays a
    # constant of the query.
    query: PreparedQuery[int] = PreparedQuery(
        lambda session_id, attempt: (
            Run.objects.filter(session_id=session_id, attempt__lt=attempt, change_seq__lt=1000)
            .exclude(pk=17000)
            .order_by("pk")
            .values_list("pk", flat=True)
        )
    )
    Run.objects.update(change_seq=1)
    Run.objects.filter(pk=runs[0].pk).update(change_seq=5000)
    for session_id in ("s0", "s1", "s2"):
        for attempt in (0, 1, 2, 3):
            expected = [
                r.pk
                for r in runs
                if r.session_id == session_id and r.attempt < attempt and r.pk != runs[0].pk
            ]
            assert query.rows(session_id, attempt) == expected


@pytest.mark.parametrize(
    "text",
    [NUL, 'it\'s \\ "quoted" %s %(x)s $1 ?', "x" * 5_000, "\U0001f600 \u2028", ""],
    ids=["NUL", "quotes and placeholders", "5,000 characters", "astral", "empty"],
)
def test_hostile_text_as_the_orm_takes_it(runs: list[Run], text: str) -> None:
    build = lambda name: Run.objects.filter(agent_name=name).values_list("pk", flat=True)  # noqa: E731
    query: PreparedQuery[int] = PreparedQuery(build)
    query.rows("warm")
    try:
        expected: Any = list(build(text))
    except (DatabaseError, ValueError) as error:  # PostgreSQL refuses NUL in text
        with pytest.raises(type(error)):
            query.rows(text)
    else:
        assert query.rows(text) == expected == []


def test_a_lone_surrogate_fails_as_in_the_orm(runs: list[Run]) -> None:
    build = lambda name: Run.objects.filter(agent_name=name).values_list("pk", flat=True)  # noqa: E731
    with pytest.raises(UnicodeEncodeError):
        list(build(SURROGATE))
    with pytest.raises(UnicodeEncodeError):
        PreparedQuery(build).rows(SURROGATE)


@pytest.mark.parametrize("lookup", ["pk", "pk__in", "pk__gt", "pk__lt"])
def test_an_int_beyond_sql_gets_the_orm_answer(runs: list[Run], lookup: str) -> None:
    def build(value: Any) -> QuerySet[Any]:
        return Run.objects.filter(**{lookup: value}).order_by("pk").values_list("pk", flat=True)

    query: PreparedQuery[int] = PreparedQuery(build)
    for huge in (10**30, -(10**30)):
        value = [huge, runs[0].pk] if lookup == "pk__in" else huge
        try:
            expected: Any = list(build(value))
        except OverflowError:  # the driver's, in the ORM too
            with pytest.raises(OverflowError):
                query.rows(value)
        else:
            assert query.rows(value) == expected


@pytest.mark.parametrize("value", [None, True, 1.5, [1, "a"], {"a": 1}])
def test_arguments_of_other_kinds_are_refused(value: Any) -> None:
    query: PreparedQuery[Run] = PreparedQuery(lambda v: Run.objects.filter(pk=v))
    with pytest.raises(NotPreparable):
        query.rows(value)


def test_what_the_sql_cannot_take_as_given_is_left_to_the_orm(
    runs: list[Run], caplog: pytest.LogCaptureFixture
) -> None:
    build = Counted(lambda text: Run.objects.filter(agent_name__icontains=text).order_by("pk"))
    query: PreparedQuery[Run] = PreparedQuery(build)
    assert [r.pk for r in query.rows("NT-1")] == [r.pk for r in runs if r.agent_name == "agent-1"]
    assert "left to the ORM" in caplog.text
    calls = build.calls
    assert [r.pk for r in query.rows("nt-0")] == [r.pk for r in runs if r.agent_name == "agent-0"]
    assert build.calls == calls + 1  # built at each call, as the ORM does
    # A string for an integer field: the ORM's own error.
    by_pk: PreparedQuery[Run] = PreparedQuery(lambda pk: Run.objects.filter(pk=pk))
    with pytest.raises(ValueError, match="expected a number"):
        by_pk.rows("abc")


def test_shapes_are_forgotten_past_the_limit(runs: list[Run], monkeypatch: Any) -> None:
    monkeypatch.setattr(prepared, "MAX_SHAPES", 4)
    query: PreparedQuery[int] = PreparedQuery(
        lambda ids: Run.objects.filter(pk__in=ids).order_by("pk").values_list("pk", flat=True)
    )
    pks = [r.pk for r in runs]
    for size in range(1, 10):
        assert query.rows(pks[:size]) == pks[:size]
        assert len(query._shapes) <= 4


def test_a_held_row_in_a_transaction(runs: list[Run]) -> None:
    query: PreparedQuery[int] = PreparedQuery(
        lambda pk: (
            Run.objects.select_for_update(no_key=True)
            .filter(pk=pk)
            .values_list("attempt", flat=True)
        )
    )
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        assert query.rows(runs[5].pk) == [runs[5].attempt]
        assert query.rows(runs[6].pk) == [runs[6].attempt]
    held = connection.features.has_select_for_no_key_update
    assert all(("FOR NO KEY UPDATE" in q["sql"]) == held for q in queries.captured_queries[-2:])


def test_an_update_sets_its_fields_as_save_converts_them(runs: list[Run]) -> None:
    update = PreparedUpdate(
        lambda session_id, attempt: Run.objects.filter(session_id=session_id, attempt=attempt),
        fields=("message", "error", "trace_id", "started_at"),
    )
    when = timezone.now()
    message = {"parts": [{"text": 'it\'s \\ "new" %s'}], "deep": [[[1]]]}
    target = [r for r in runs if r.session_id == "s1" and r.attempt == runs[1].attempt]
    assert update.update((message, "", "t" * 32, when), "s1", runs[1].attempt) == len(target)
    for run in Run.objects.filter(pk__in=[r.pk for r in target]):
        assert (run.message, run.trace_id, run.started_at) == (message, "t" * 32, when)
    untouched = Run.objects.exclude(pk__in=[r.pk for r in target])
    assert all(r.trace_id == "" and r.started_at is None for r in untouched)
    assert update.update((None, "", "", None), "s1", 99) == 0  # no row: none changed
    assert kept(update)
    # ``None`` writes NULL.
    update.update(({"a": 1}, "e", "", None), "s1", runs[1].attempt)
    assert Run.objects.get(pk=target[0].pk).started_at is None


def test_an_update_kept_once_and_as_the_orm_updates(runs: list[Run]) -> None:
    build = Counted(
        lambda run_id, seq: Run.objects.filter(
            Q(change_seq__isnull=True) | Q(change_seq__lt=seq), pk=run_id
        )
    )
    raise_to = PreparedUpdate(build, fields=("change_seq",))
    assert raise_to.update((5,), runs[0].pk, 5) == 1
    assert raise_to.update((3,), runs[0].pk, 3) == 0  # only ever raised
    assert raise_to.update((9,), runs[0].pk, 9) == 1
    assert build.calls == 2  # one shape, built twice once (the stand-ins)
    assert Run.objects.get(pk=runs[0].pk).change_seq == 9
    with pytest.raises(ValueError, match="one per field"):
        raise_to.update((1, 2), runs[0].pk, 1)


def test_an_update_through_a_join_or_of_no_row_is_the_orm_one(runs: list[Run]) -> None:
    joined = PreparedUpdate(
        lambda app: Run.objects.filter(session__app_name=app), fields=("worker",)
    )
    assert joined.update(("w",), "app") == len(runs)
    assert set(Run.objects.values_list("worker", flat=True)) == {"w"}
    none = PreparedUpdate(lambda ids: Run.objects.filter(pk__in=ids), fields=("worker",))
    with CaptureQueriesContext(connection) as queries:
        assert none.update(("x",), []) == 0
    assert len(queries) == 0


@pytest.mark.django_db(transaction=True)  # outside a transaction, the test's own too
def test_a_held_row_outside_a_transaction_is_refused_as_the_orm_refuses_it(
    runs: list[Run],
) -> None:
    query: PreparedQuery[int] = PreparedQuery(
        lambda pk: Run.objects.select_for_update().filter(pk=pk).values_list("pk", flat=True)
    )
    with transaction.atomic():
        query.rows(runs[0].pk)  # built inside one
    if not connection.features.has_select_for_update:
        assert query.rows(runs[0].pk) == [runs[0].pk]  # SQLite holds no row
        return
    with pytest.raises(TransactionManagementError):
        list(Run.objects.select_for_update().filter(pk=runs[0].pk))
    with pytest.raises(TransactionManagementError):
        query.rows(runs[0].pk)


def test_a_query_with_prefetches_is_left_to_the_orm(runs: list[Run]) -> None:
    query: PreparedQuery[AgentSession] = PreparedQuery(
        lambda ids: AgentSession.objects.filter(pk__in=ids).prefetch_related("runs").order_by("pk")
    )
    found = query.rows(["s0", "s1"])
    with CaptureQueriesContext(connection) as queries:
        counts = [len(session.runs.all()) for session in found]  # prefetched: no query
    assert counts == [3, 3] and len(queries) == 0


def kept(query: Any) -> bool:
    """Whether every shape of ``query`` so far is kept as SQL (none left to the ORM)."""
    return bool(query._shapes) and all(
        isinstance(s, prepared._Shape) for s in query._shapes.values()
    )


def test_the_prepared_path_is_the_one_taken(runs: list[Run]) -> None:
    """The project's hot reads and writes really keep their SQL (a query left to the ORM
    would still be right, only not faster)."""
    from agentdash.agent_sessions.locks import _HELD
    from agentdash.runs.lifecycle import _CHANGE_SEQ_RAISE
    from agentdash.runs.turns import _UNDER_WAY_OR_QUEUED

    with transaction.atomic():
        _HELD.rows("s0")
    _UNDER_WAY_OR_QUEUED.rows("s1")
    _CHANGE_SEQ_RAISE.update((3,), runs[0].pk, 3)
    assert kept(_HELD) and kept(_UNDER_WAY_OR_QUEUED) and kept(_CHANGE_SEQ_RAISE)


def test_an_ingest_key_is_checked_by_its_prepared_read(alice: User) -> None:
    """Every export checks its key: the read keeps its SQL, and answers as the ORM does — the
    live key with its owner, not a revoked one, not a wrong secret."""
    from agentdash.ingest.keys import (
        _LIVE_KEY,
        ingest_key_check,
        ingest_key_create,
        ingest_key_revoke,
    )

    key, raw = ingest_key_create(name="k", project="shop", owner=alice, actor=None)
    found = ingest_key_check(raw)
    assert found is not None and found.pk == key.pk and found.owner.username == "alice"
    assert kept(_LIVE_KEY)
    assert ingest_key_check(raw[:-1] + ("x" if raw[-1] != "x" else "y")) is None
    ingest_key_revoke(key=key, actor=alice)
    assert ingest_key_check(raw) is None


@pytest.mark.parametrize(
    ("lookup", "value"),
    [
        ("agent_name__iexact", "agent_1"),
        ("agent_name__startswith", "agent%"),
        ("agent_name__contains", "_"),
    ],
)
def test_a_pattern_lookup_escaping_its_value_is_left_to_the_orm(
    runs: list[Run], lookup: str, value: str
) -> None:
    run_make(runs[0].session, 100, agent_name="agentX1")
    run_make(runs[0].session, 101, agent_name="agent%1")

    def build(text: str) -> QuerySet[Any]:
        return (
            Run.objects.filter(**{lookup: text}).order_by("pk").values_list("agent_name", flat=True)
        )

    query: PreparedQuery[str] = PreparedQuery(build)
    assert query.rows(value) == list(build(value))  # (escaped: left to the ORM on SQLite)


def test_a_value_computed_from_an_argument_is_not_taken_for_another(runs: list[Run]) -> None:
    def build(low: int, other: int) -> QuerySet[Any]:
        return (
            Run.objects.filter(attempt__gte=low, attempt__lt=low + 1)
            .exclude(attempt=other)
            .order_by("pk")
            .values_list("pk", flat=True)
        )

    query: PreparedQuery[int] = PreparedQuery(build)
    for low, other in ((0, 1), (1, 2), (2, 0), (1, 1)):
        assert query.rows(low, other) == list(build(low, other))


@pytest.mark.parametrize("value", [-1, -(2**40), 2**40, 40_000])
def test_a_value_outside_its_fields_range_gets_the_orm_answer(runs: list[Run], value: int) -> None:
    """The ORM answers an integer outside its field's range without SQL (a ``>`` under the
    range keeps every row, NULLs too; ``=`` keeps none): so does a prepared query."""
    Run.objects.filter(pk=runs[0].pk).update(change_seq=5)  # the others: NULL
    for lookup in ("change_seq__gt", "change_seq__lt", "change_seq", "attempt__gte", "attempt"):

        def build(n: int, lookup: str = lookup) -> QuerySet[Any]:
            return Run.objects.filter(**{lookup: n}).order_by("pk").values_list("pk", flat=True)

        query: PreparedQuery[int] = PreparedQuery(build)
        query.rows(1)  # kept
        assert query.rows(value) == list(build(value)), lookup


def test_an_argument_for_a_field_of_another_kind_is_left_to_the_orm(runs: list[Run]) -> None:
    build = lambda when: Run.objects.filter(created_at__lt=when).values_list("pk", flat=True)  # noqa: E731
    query: PreparedQuery[int] = PreparedQuery(build)
    assert sorted(query.rows("2999-01-01T00:00:00+00:00")) == sorted(r.pk for r in runs)
    assert not kept(query)


def test_columns_only_ordered_by_are_cut_as_the_orm_cuts_them(runs: list[Run]) -> None:
    def build(ids: list[int]) -> QuerySet[Any]:
        return (
            Run.objects.filter(pk__in=ids)
            .order_by("created_at")
            .distinct()
            .values_list("session_id", "attempt")
        )

    query: PreparedQuery[tuple[str, int]] = PreparedQuery(build)
    ids = [r.pk for r in runs]
    assert query.rows(ids) == list(build(ids))
    assert kept(query) and all(len(row) == 2 for row in query.rows(ids))


def test_an_update_with_an_expression_or_an_instance_is_the_orm_one(runs: list[Run]) -> None:
    by_pk = PreparedUpdate(lambda pk: Run.objects.filter(pk=pk), fields=("attempt",))
    assert by_pk.update((F("attempt") + 10,), runs[2].pk) == 1
    assert Run.objects.get(pk=runs[2].pk).attempt == runs[2].attempt + 10
    owner = PreparedUpdate(lambda pk: Run.objects.filter(pk=pk), fields=("session",))
    other = AgentSession.objects.get(pk="s0")
    assert owner.update((other,), runs[1].pk) == 1
    assert Run.objects.get(pk=runs[1].pk).session_id == "s0"
    assert owner.update(("s2",), runs[1].pk) == 1  # and a plain value, kept as SQL
    assert Run.objects.get(pk=runs[1].pk).session_id == "s2" and kept(owner)
