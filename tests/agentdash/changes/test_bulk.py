"""Rows written without model instances: converted as save() converts them, upserted on a
unique constraint, any other conflict an IntegrityError."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from django.db import IntegrityError, transaction

from agentdash.agent_sessions.models import AgentSession
from agentdash.changes.bulk import rows_insert
from agentdash.changes.models import SessionChange

pytestmark = pytest.mark.django_db

MakeSession = Callable[[str], AgentSession]
AT = datetime(2026, 1, 2, 3, 4, 5, 678_000, tzinfo=UTC)
FIELDS = ("session", "seq", "kind", "ref", "at")


def stored() -> list[tuple[str, int, str, str, datetime]]:
    rows = SessionChange.objects.order_by("seq").values_list(*FIELDS)
    return [(s, seq, kind, ref, at) for s, seq, kind, ref, at in rows]


def test_rows_are_inserted_as_save_would_store_them(make_session: MakeSession) -> None:
    make_session("s1")
    rows_insert(
        model=SessionChange,
        fields=FIELDS,
        rows=[("s1", 1, "span", "t:a", AT), ("s1", 2, "run", "7", AT)],
    )
    assert stored() == [("s1", 1, "span", "t:a", AT), ("s1", 2, "run", "7", AT)]


def test_a_conflict_updates_only_the_named_fields(make_session: MakeSession) -> None:
    make_session("s1")
    rows_insert(model=SessionChange, fields=FIELDS, rows=[("s1", 1, "span", "t:a", AT)])
    later = datetime(2027, 1, 1, tzinfo=UTC)
    rows_insert(
        model=SessionChange,
        fields=FIELDS,
        rows=[("s1", 1, "run", "t:b", later), ("s1", 2, "run", "8", later)],
        unique=("session", "seq"),
        update=("ref",),
    )
    assert stored() == [("s1", 1, "span", "t:b", AT), ("s1", 2, "run", "8", later)]


def test_each_shape_of_statement_does_its_own_writes(make_session: MakeSession) -> None:
    """A statement is made once per shape (fields, conflict target, what it updates) and
    kept: the same fields with another conflict clause, or none, are another statement."""
    make_session("s1")
    rows_insert(model=SessionChange, fields=FIELDS, rows=[("s1", 1, "span", "t:a", AT)])
    for update, row in (
        (("ref",), ("s1", 1, "run", "t:b", AT)),
        (("kind",), ("s1", 1, "run", "t:c", AT)),
    ):
        rows_insert(
            model=SessionChange, fields=FIELDS, rows=[row], unique=("session", "seq"), update=update
        )
    assert stored() == [
        ("s1", 1, "run", "t:b", AT)
    ]  # the ref from the first, the kind from the second
    with pytest.raises(IntegrityError), transaction.atomic():
        rows_insert(model=SessionChange, fields=FIELDS, rows=[("s1", 1, "span", "t:d", AT)])


def test_a_conflict_without_update_raises_and_writes_nothing(make_session: MakeSession) -> None:
    make_session("s1")
    rows_insert(model=SessionChange, fields=FIELDS, rows=[("s1", 1, "span", "t:a", AT)])
    with pytest.raises(IntegrityError), transaction.atomic():
        rows_insert(
            model=SessionChange,
            fields=FIELDS,
            rows=[("s1", 2, "span", "t:b", AT), ("s1", 1, "span", "t:c", AT)],
        )
    assert stored() == [("s1", 1, "span", "t:a", AT)]


def test_no_rows_no_query(django_assert_num_queries) -> None:  # type: ignore[no-untyped-def]
    with django_assert_num_queries(0):
        rows_insert(model=SessionChange, fields=FIELDS, rows=[])


def test_a_field_that_is_no_column_is_refused() -> None:
    with pytest.raises(ValueError, match="spans"):
        rows_insert(model=AgentSession, fields=("spans",), rows=[("x",)])


def test_values_are_converted_by_their_field(make_session: MakeSession) -> None:
    """Plain values go as they are; others as save() converts them (an int for a text
    column becomes its text; one moment for many rows, each row gets it)."""
    make_session("s1")
    rows_insert(
        model=SessionChange,
        fields=FIELDS,
        rows=[("s1", n, "span", n, AT) for n in range(1, 4)],  # ref given as an int
    )
    assert stored() == [("s1", n, "span", str(n), AT) for n in range(1, 4)]


def test_a_row_of_the_wrong_length_is_refused() -> None:
    with pytest.raises(ValueError, match="5 fields"):
        rows_insert(model=SessionChange, fields=FIELDS, rows=[("s1", 1, "span", "t:a")])
