"""The sessions list's selector: who sees what, the per-session columns, search and filters,
and keyset pages that neither skip nor repeat a row."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from django.contrib.auth.models import User

from agentdash.agent_sessions.models import AgentSession
from agentdash.dashboard.sessions_list.reads import (
    COLUMNS,
    Cursor,
    SessionListFilters,
    session_list_page,
)
from agentdash.runs.models import Run
from agentdash.spans.models import Span

pytestmark = pytest.mark.django_db


def make(
    session_id: str,
    *,
    owner: User | None = None,
    at: float = 1_000.0,
    app: str = "capital_agent",
    title: str = "",
    first: str = "",
    runs: tuple[str, ...] = (),
    spans: int = 0,
    errors: int = 0,
) -> AgentSession:
    """A session last active at ``at``, with runs of these statuses (oldest first) and
    ``spans`` spans of which ``errors`` failed."""
    session = AgentSession.objects.create(
        id=session_id, app_name=app, user_id=str(owner.pk) if owner else "u", owner=owner,
        title=title, first_message=first, last_update_time=at,
    )  # fmt: skip
    for status in runs:
        Run.objects.create(
            session=session, agent_name=app, invocation_id=f"e-{uuid.uuid4().hex}",
            status=status, message={},
        )  # fmt: skip
    for n in range(spans):
        Span.objects.create(
            trace_id=session_id.ljust(32, "0")[:32], span_id=f"{n:016x}", name="s",
            start_time=n, session=session,
            status=Span.Status.ERROR if n < errors else Span.Status.OK,
        )  # fmt: skip
    return session


def ids(page: Any) -> list[str]:
    return [row["id"] for row in page.rows]


def listed(user: User, **filters: Any) -> list[str]:
    return ids(session_list_page(user=user, filters=SessionListFilters(**filters)))


def test_a_user_sees_their_own_sessions_newest_activity_first(alice: User, bob: User) -> None:
    make("a-old", owner=alice, at=1)
    make("a-new", owner=alice, at=3)
    make("b", owner=bob, at=2)
    make("nobodys", at=4)
    assert listed(alice) == ["a-new", "a-old"]
    assert listed(bob) == ["b"]


def test_an_operator_sees_everyones_and_may_narrow_to_one_owner(
    alice: User, bob: User, operator_user: User
) -> None:
    make("a", owner=alice, at=1)
    make("b", owner=bob, at=2)
    make("nobodys", at=3)
    assert listed(operator_user) == ["nobodys", "b", "a"]
    assert listed(operator_user, owner="alice") == ["a"]
    assert listed(alice, owner="bob") == ["a"]  # not a way in: for others it is ignored


def test_each_row_has_its_columns(alice: User, operator_user: User) -> None:
    make("busy", owner=alice, title="Trip", first="Plan a trip", at=1_700_000_000.5,
         runs=("failed", "succeeded", "running"), spans=5, errors=2)  # fmt: skip
    make("idle", owner=None, at=1)
    rows = {r["id"]: r for r in session_list_page(
        user=operator_user, filters=SessionListFilters()).rows}  # fmt: skip
    busy, idle = rows["busy"], rows["idle"]
    assert (busy["title"], busy["first_message"], busy["app_name"]) == (
        "Trip", "Plan a trip", "capital_agent",
    )  # fmt: skip
    assert busy["owner"] == "alice" and idle["owner"] == ""
    assert busy["run_status"] == "running"  # the latest run's
    assert (busy["span_count"], busy["error_count"]) == (5, 2)
    assert (idle["run_status"], idle["span_count"], idle["error_count"]) == (None, 0, 0)
    assert busy["last_activity"] == datetime.fromtimestamp(1_700_000_000.5, tz=UTC)
    assert busy["created_at"] is not None
    assert set(COLUMNS) <= set(busy)


def test_who_may_rename_and_delete_each_row(alice: User, bob: User, operator_user: User) -> None:
    make("alices", owner=alice)
    make("operators", owner=operator_user)
    mine = session_list_page(user=alice, filters=SessionListFilters()).rows[0]
    assert (mine["can_rename"], mine["can_delete"]) == (True, True)
    rows = {r["id"]: r for r in session_list_page(
        user=operator_user, filters=SessionListFilters()).rows}  # fmt: skip
    assert (rows["alices"]["can_rename"], rows["alices"]["can_delete"]) == (False, True)
    assert (rows["operators"]["can_rename"], rows["operators"]["can_delete"]) == (True, True)


def test_search_finds_titles_first_messages_and_ids(alice: User) -> None:
    make("3f9c0aa1", owner=alice, title="Trip to Lisbon", first="Plan a trip", at=1)
    make("77aa", owner=alice, title="Renamed", first="What is the capital of FRANCE?", at=2)
    make("other", owner=alice, title="Nothing here", at=3)
    assert listed(alice, q="lisbon") == ["3f9c0aa1"]
    assert listed(alice, q="capital of france") == ["77aa"]  # the first message, any case
    assert listed(alice, q="3f9c") == ["3f9c0aa1"]  # the start of an id
    assert listed(alice, q="9c0a") == []  # not the middle of one
    assert listed(alice, q="100%") == [] and listed(alice, q="_") == []  # LIKE's wildcards


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("active", ["queued", "running"]),
        ("running", ["running"]),
        ("succeeded", ["succeeded"]),
        ("failed", ["failed"]),
        ("cancelled", []),
        ("none", ["no-runs"]),
        ("", ["no-runs", "queued", "running", "succeeded", "failed"]),
    ],
)
def test_status_filters_by_the_latest_run(alice: User, status: str, expected: list[str]) -> None:
    make("failed", owner=alice, at=1, runs=("succeeded", "failed"))
    make("succeeded", owner=alice, at=2, runs=("failed", "succeeded"))
    make("running", owner=alice, at=3, runs=("running",))
    make("queued", owner=alice, at=4, runs=("succeeded", "queued"))
    make("no-runs", owner=alice, at=5)
    assert listed(alice, status=status) == expected


def test_agent_and_errors_filters(alice: User) -> None:
    make("cap-ok", owner=alice, at=1, spans=3)
    make("cap-err", owner=alice, at=2, spans=3, errors=1)
    make("data-err", owner=alice, at=3, app="data_agent", spans=1, errors=1)
    assert listed(alice, agent="capital_agent") == ["cap-err", "cap-ok"]
    assert listed(alice, errors=True) == ["data-err", "cap-err"]
    assert listed(alice, agent="capital_agent", errors=True) == ["cap-err"]


def test_pages_walk_every_row_once_both_ways(alice: User) -> None:
    # Ties on the last activity are ordered by id: a page boundary inside a tie is exact.
    for n in range(23):
        make(f"s{n:02d}", owner=alice, at=float(n // 3))
    everything = listed(alice)
    assert len(everything) == 23

    seen, pages, filters = [], [], SessionListFilters()
    while True:
        page = session_list_page(user=alice, filters=filters, limit=5)
        pages.append(page)
        seen += ids(page)
        if page.older is None:
            break
        filters = SessionListFilters(after=page.older)
    assert seen == everything and len(pages) == 5
    assert pages[0].newer is None and all(p.newer is not None for p in pages[1:])

    back = session_list_page(user=alice, filters=SessionListFilters(before=pages[3].newer), limit=5)
    assert ids(back) == ids(pages[2])
    # Back near the top, fewer than a page is newer: the first page, whole.
    first = session_list_page(
        user=alice, filters=SessionListFilters(before=pages[1].newer), limit=5
    )
    assert ids(first) == ids(pages[0]) and first.newer is None


def test_filters_hold_across_pages(alice: User) -> None:
    for n in range(12):
        make(f"s{n:02d}", owner=alice, at=float(n), app="data_agent" if n % 2 else "capital_agent")
    page = session_list_page(user=alice, filters=SessionListFilters(agent="data_agent"), limit=4)
    rest = session_list_page(
        user=alice, filters=SessionListFilters(agent="data_agent", after=page.older), limit=4
    )
    assert ids(page) + ids(rest) == ["s11", "s09", "s07", "s05", "s03", "s01"]
    assert rest.older is None


@pytest.mark.parametrize(
    "text", ["", "x", "nan:a", "inf:a", "1.5", "1.5:", ":a", "1e999:a", "\x00:a"]
)
def test_a_cursor_that_is_not_one_is_none(text: str) -> None:
    assert Cursor.parse(text) is None


def test_a_cursor_round_trips_exactly() -> None:
    cursor = Cursor(1_732_400_000.123456, "a:b:c")
    assert Cursor.parse(str(cursor)) == cursor
