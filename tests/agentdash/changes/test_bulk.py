"""Rows written without model instances: converted as save() converts them, upserted on a
unique constraint, any other conflict an IntegrityError — and on PostgreSQL many rows at once
by COPY, with the same results."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.changes.bulk import COPY_FROM, EncodedJson, rows_insert
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


# Text a driver must escape (COPY's own markers among it), and values of every JSON shape.
AWKWARD = ["\\N", "a\tb", "line\nnext", "cr\r", "back\\slash", "é😀", "'quoted'", "", "x" * 5000]
EVENT_FIELDS = (
    "session_id", "seq", "event_id", "invocation_id", "author", "timestamp", "version",
    "state_delta_keys", "data", "html",
)  # fmt: skip


def test_many_rows_are_stored_as_given(make_session: MakeSession) -> None:
    """As many rows as go by COPY on PostgreSQL (``COPY_FROM``), each value read back as
    given: text with tabs, newlines, backslashes and ``\\N``; JSON given as a value or
    with its text (``EncodedJson``); numbers; a moment per row."""
    make_session("s1")
    count = COPY_FROM + len(AWKWARD)
    texts = [AWKWARD[n % len(AWKWARD)] for n in range(count)]
    datas = [
        {"text": text, "n": n, "nested": [{"deep": [n, None, True, 1.5]}], "tab\tkey": "\\N"}
        for n, text in enumerate(texts)
    ]
    rows = [
        (
            "s1", n + 1, f"e{n}", texts[n][:128], "agent", 1.25 + n, n,
            [text, "\\N"] if n % 2 else EncodedJson([text, "\\N"], json.dumps([text, "\\N"])),
            EncodedJson(data, json.dumps(data)) if n % 2 else data,
            texts[n],
        )
        for n, (text, data) in enumerate(zip(texts, datas, strict=True))
    ]  # fmt: skip
    rows_insert(model=SessionEvent, fields=EVENT_FIELDS, rows=rows)

    found = list(
        SessionEvent.objects.order_by("seq").values_list(
            "seq", "event_id", "invocation_id", "timestamp", "version",
            "state_delta_keys", "data", "html",
        )
    )  # fmt: skip
    assert found == [
        (n + 1, f"e{n}", text[:128], 1.25 + n, n, [text, "\\N"], data, text)
        for n, (text, data) in enumerate(zip(texts, datas, strict=True))
    ]
    many = [("s1", n, "span", texts[n % len(texts)][:128], AT) for n in range(100, 100 + COPY_FROM)]
    rows_insert(model=SessionChange, fields=FIELDS, rows=many)
    assert stored() == many


def test_many_rows_with_one_conflict_raise_and_write_nothing(make_session: MakeSession) -> None:
    make_session("s1")
    rows_insert(model=SessionChange, fields=FIELDS, rows=[("s1", 5, "span", "t:a", AT)])
    clashing = [("s1", seq, "span", f"t:{seq}", AT) for seq in range(1, COPY_FROM + 2)]
    with pytest.raises(IntegrityError), transaction.atomic():
        rows_insert(model=SessionChange, fields=FIELDS, rows=clashing)
    assert stored() == [("s1", 5, "span", "t:a", AT)]


def test_many_rows_are_one_copy_on_postgresql(make_session: MakeSession) -> None:
    """On PostgreSQL ``COPY_FROM`` rows are one ``COPY``, fewer an ``INSERT`` (shown among
    the statements run); SQLite has no ``COPY``: an ``INSERT`` either way."""
    make_session("s1")
    with CaptureQueriesContext(connection) as many:
        rows_insert(
            model=SessionChange,
            fields=FIELDS,
            rows=[("s1", seq, "span", "t", AT) for seq in range(1, COPY_FROM + 1)],
        )
    with CaptureQueriesContext(connection) as few:
        rows_insert(
            model=SessionChange,
            fields=FIELDS,
            rows=[("s1", seq, "span", "t", AT) for seq in range(100, 100 + COPY_FROM - 1)],
        )
    copied = connection.vendor == "postgresql"
    assert [q["sql"].startswith("COPY ") for q in many.captured_queries] == [copied]
    assert [f"{COPY_FROM - 1} times: INSERT " in q["sql"] for q in few.captured_queries] == [True]
    assert len(stored()) == 2 * COPY_FROM - 1
