"""The items a run's changes are announced with: made from the run in hand while it cannot
have made a model call (queued, its first attempt just claimed), read back with its totals
afterwards."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agentdash.agent_sessions.models import AgentSession
from agentdash.changes.announcements import announcer_register, announcer_unregister
from agentdash.changes.items import items_after
from agentdash.runs.lifecycle import run_claim, run_finish
from agentdash.runs.models import Run
from agentdash.runs.services import run_enqueue
from runtime.telemetry.trace_ids import trace_id_new
from tests.agentdash.recording_executor import RecordingExecutor
from tests.agentdash.runs.conftest import says

pytestmark = pytest.mark.django_db(transaction=True)

Announced = dict[int, Any]


@pytest.fixture
def announced() -> Iterator[Announced]:
    """seq → the items maker each committed change was announced with."""
    found: Announced = {}

    def listener(session_id: str, *, seq: int | None = None, items: Any = None, **_: Any) -> None:
        assert seq is not None
        found[seq] = items

    announcer_register(listener)
    yield found
    announcer_unregister(listener)


def _made(maker: Any) -> tuple[list[dict[str, Any]], int]:
    """The items ``maker`` makes, and how many queries making them took."""
    with CaptureQueriesContext(connection) as queries:
        items = maker(10)
    return items, len(queries.captured_queries)


def test_a_queued_and_a_just_claimed_run_are_told_as_they_are_without_a_read(
    register: Callable[..., None],
    make_session: Callable[[str], AgentSession],
    recorder: RecordingExecutor,
    announced: Announced,
) -> None:
    register()
    session = make_session("capital_agent")
    run = run_enqueue(
        session=session, agent_name="capital_agent", message=says("Capital of Peru?"),
        requested_by=None,
    )  # fmt: skip
    queued_seq = Run.objects.get(pk=run.pk).change_seq
    assert queued_seq is not None
    queued, reads = _made(announced[queued_seq])
    assert reads == 0
    assert queued == items_after(session_id=session.id, after_seq=queued_seq - 1, limit=1)
    assert queued[0]["data"]["status"] == "queued"
    assert queued[0]["data"]["queued_text"] == "Capital of Peru?"

    trace_id = trace_id_new()
    claimed = run_claim(run_id=run.pk, worker="w1", trace_id=trace_id)
    assert claimed is not None and claimed.change_seq is not None
    maker = announced[claimed.change_seq]
    claimed.status = Run.Status.SUCCEEDED  # what the worker changes next is not in the item
    running, reads = _made(maker)
    assert reads == 0
    assert running == items_after(session_id=session.id, after_seq=queued_seq, limit=1)
    data = running[0]["data"]
    assert (data["status"], data["attempt"], data["trace_id"]) == ("running", 1, trace_id)
    assert data["usage"]["calls"] == 0 and data["change_seq"] == claimed.change_seq

    # Once it may have made model calls, its item is read with its totals.
    stored = Run.objects.get(pk=run.pk)
    assert run_finish(run=stored, status=Run.Status.SUCCEEDED)
    ended, reads = _made(announced[stored.change_seq])
    assert reads > 0
    assert ended[0]["data"]["status"] == "succeeded"
