"""Annotation queues (docs/SCORES.md): made with the scores they ask for, filled from a
filter (agent, outcome, a failed tool call, a window; newest first, a limit, never twice)
or with a session's runs; each item given to one reviewer, finished or skipped; the review
page shows the run's conversation as text; operators only."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.test import Client
from django.utils import timezone

from agentdash.agent_sessions.models import AgentSession
from agentdash.core.models import AuditEntry
from agentdash.runs.models import Run
from agentdash.scores.models import AnnotationQueue, QueueItem, ScoreDefinition
from agentdash.scores.queues import (
    HOLD,
    RunFilter,
    queue_add_session,
    queue_create,
    queue_fill,
    queue_item_finish,
    queue_item_release,
    queue_next,
    queue_progress,
)
from agentdash.spans.services import span_upsert
from tests.agentdash.stored import session_of, store_event

pytestmark = [pytest.mark.django_db, pytest.mark.database]


def run_of(session: AgentSession, status: str = "succeeded", days_ago: int = 0) -> Run:
    run = Run.objects.create(session=session, agent_name=session.app_name, status=status,
                             message={}, invocation_id=f"e-{Run.objects.count() + 1}")  # fmt: skip
    if days_ago:
        Run.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(days=days_ago))
    return run


@pytest.fixture
def queue(operator_user: User) -> AnnotationQueue:
    ScoreDefinition.objects.create(name="helpful", kind="boolean")
    return queue_create(name="support-review", description="", definitions=["helpful"],
                        actor=operator_user)  # fmt: skip


def test_a_queue_needs_kept_scores_a_name_and_an_operator(operator_user: User, alice: User) -> None:
    ScoreDefinition.objects.create(name="helpful", kind="boolean")
    for name, asked in (("ok-name", []), ("ok-name", ["nope"]), ("bad name!", ["helpful"])):
        with pytest.raises(ValidationError):
            queue_create(name=name, description="", definitions=asked, actor=operator_user)
    with pytest.raises(PermissionDenied):
        queue_create(name="mine", description="", definitions=["helpful"], actor=alice)
    assert not AnnotationQueue.objects.exists()


def test_a_filter_fills_newest_first_within_its_window_and_never_twice(
    queue: AnnotationQueue, alice: User, operator_user: User
) -> None:
    desk = session_of(alice, "s-desk", "support_desk")
    other = session_of(alice, "s-cap", "capital_agent")
    old = run_of(desk, days_ago=30)
    failed = run_of(desk, "failed")
    ok = [run_of(desk) for _ in range(3)]
    run_of(other)
    run_of(desk, "running")  # not finished: never taken
    span_upsert(trace_id="a" * 32, span_id="b" * 16, name="execute_tool lookup", start_time=1,
                end_time=2, status="error", session_id=desk.pk, run_id=ok[0].pk,
                attributes={"agentdash.span.kind": "tool"})  # fmt: skip

    def fill(**given: object) -> int:
        return queue_fill(queue=queue, runs=RunFilter(**given), actor=operator_user)  # type: ignore[arg-type]

    assert fill(agent="support_desk", tool_error=True) == 1
    assert fill(agent="support_desk", outcome="failed") == 1
    assert fill(agent="support_desk", limit=2) == 2  # the newest two not in it yet
    assert fill(agent="support_desk") == 0  # the week's are all in
    assert fill(agent="support_desk", days=60) == 1  # the old one, now in the window
    runs = list(queue.items.order_by("position").values_list("run_id", flat=True))
    assert runs == [ok[0].pk, failed.pk, ok[2].pk, ok[1].pk, old.pk]
    assert fill(agent="support_desk", days=60) == 0
    with pytest.raises(ValidationError):
        fill(limit=0)
    assert queue_add_session(queue=queue, session_id=other.pk, actor=operator_user) == 1
    with pytest.raises(ValidationError, match="no session"):
        queue_add_session(queue=queue, session_id="nope", actor=operator_user)


def test_each_item_goes_to_one_reviewer_and_is_finished_once(
    queue: AnnotationQueue, alice: User, operator_user: User, staff_operator: User
) -> None:
    desk = session_of(alice, "s-desk", "support_desk")
    for _ in range(3):
        run_of(desk)
    queue_fill(queue=queue, runs=RunFilter(limit=10), actor=operator_user)
    mine = queue_next(queue=queue, actor=operator_user)
    theirs = queue_next(queue=queue, actor=staff_operator)
    assert mine and theirs and mine.pk != theirs.pk
    assert queue_next(queue=queue, actor=operator_user) == mine  # still theirs to finish
    queue_item_finish(item=mine, actor=operator_user)
    queue_item_finish(item=theirs, actor=staff_operator, skipped=True)
    last = queue_next(queue=queue, actor=operator_user)
    assert last is not None and last.pk not in (mine.pk, theirs.pk)
    queue_item_finish(item=last, actor=operator_user)
    assert queue_next(queue=queue, actor=operator_user) is None
    assert queue_progress(queue=queue) == {"total": 3, "done": 2, "skipped": 1, "pending": 0}
    assert QueueItem.objects.get(pk=theirs.pk).done_by == staff_operator


def test_an_item_held_past_its_hold_goes_to_the_next_reviewer(
    queue: AnnotationQueue, alice: User, operator_user: User, staff_operator: User
) -> None:
    """A reviewer who opened an item and left holds it for HOLD; past that, the next
    reviewer gets it. Opening it again before then holds it anew."""
    run_of(session_of(alice, "s-desk", "support_desk"))
    queue_fill(queue=queue, runs=RunFilter(limit=10), actor=operator_user)
    left = queue_next(queue=queue, actor=operator_user)
    assert left is not None and queue_next(queue=queue, actor=staff_operator) is None
    almost = timezone.now() - HOLD + timedelta(minutes=1)
    QueueItem.objects.filter(pk=left.pk).update(assigned_at=almost)
    assert queue_next(queue=queue, actor=staff_operator) is None  # still held
    assert queue_next(queue=queue, actor=operator_user) == left  # back: held anew
    QueueItem.objects.filter(pk=left.pk).update(assigned_at=timezone.now() - HOLD)
    taken = queue_next(queue=queue, actor=staff_operator)
    assert taken == left and QueueItem.objects.get(pk=left.pk).assigned_to == staff_operator


def test_an_operator_releases_an_item_its_reviewer_left(
    client: Client, queue: AnnotationQueue, alice: User, operator_user: User,
    staff_operator: User,
) -> None:  # fmt: skip
    run_of(session_of(alice, "s-desk", "support_desk"))
    queue_fill(queue=queue, runs=RunFilter(limit=10), actor=operator_user)
    held = queue_next(queue=queue, actor=staff_operator)
    assert held is not None
    client.force_login(operator_user)
    page = client.get(f"/queues/{queue.name}/").content.decode()
    assert "staffop has it since" in page and 'value="release"' in page
    answer = client.post(f"/queues/{queue.name}/", {"action": "release", "item": held.pk})
    assert answer.status_code == 302
    assert QueueItem.objects.get(pk=held.pk).assigned_to is None
    assert queue_next(queue=queue, actor=operator_user) == held  # the next reviewer's now
    entry = AuditEntry.objects.get(action="queue.release")
    assert entry.actor == operator_user and entry.before["held_by"] == "staffop"
    # Reviewed: not released; an item of no queue or not a number: not found.
    queue_item_finish(item=held, actor=operator_user)
    with pytest.raises(ValidationError):
        queue_item_release(item=QueueItem.objects.get(pk=held.pk), actor=operator_user)
    for wanted in ("999999", "x", ""):
        answer = client.post(f"/queues/{queue.name}/", {"action": "release", "item": wanted})
        assert answer.status_code == 404
    client.force_login(alice)  # not an operator
    assert client.post(f"/queues/{queue.name}/", {"action": "release", "item": held.pk}
                       ).status_code == 403  # fmt: skip
    with pytest.raises(PermissionDenied):
        queue_item_release(item=held, actor=alice)


def test_the_review_page_shows_the_run_as_text_and_moves_on(
    queue: AnnotationQueue, alice: User, operator_user: User
) -> None:
    desk = session_of(alice, "s-desk", "support_desk")
    run = run_of(desk)
    store_event(desk.pk, "<script>alert(1)</script> my invoice?", invocation_id=run.invocation_id)
    queue_fill(queue=queue, runs=RunFilter(), actor=operator_user)
    client = Client()
    client.force_login(operator_user)
    page = client.get("/queues/support-review/review/").content.decode()
    assert (
        "&lt;script&gt;alert(1)&lt;/script&gt; my invoice?" in page and "<script>alert" not in page
    )
    item = QueueItem.objects.get()
    moved = client.post("/queues/support-review/review/", {"item": item.pk, "action": "done"})
    assert moved.status_code == 302
    assert "All reviewed" in client.get("/queues/support-review/review/").content.decode()
    listing = client.get("/queues/").content.decode()
    assert "support-review" in listing and "1 / 1" in listing
    client.force_login(alice)
    assert client.get("/queues/support-review/review/").status_code == 403
