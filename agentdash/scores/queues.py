"""Annotation queues (docs/SCORES.md): operators make a queue with the scores it asks for,
fill it from a filter or by hand, and reviewers go through it item by item — each item
given to the reviewer who opens it (for :data:`HOLD`, or until an operator releases it),
marked done (or skipped) by them. Operators only; creating, filling a queue and releasing
an item are audited (the scores given are, as every score)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Count, Max, Q
from django.utils import timezone

from agentdash.core.permissions import is_operator
from agentdash.core.services import audit_record
from agentdash.runs.models import Run
from agentdash.scores.models import AnnotationQueue, QueueItem, ScoreDefinition
from agentdash.spans.step_reads import runs_with_tool_errors

TARGET = "scores.queue"
FILL_MAX = 500
FINISHED = (Run.Status.SUCCEEDED, Run.Status.FAILED, Run.Status.CANCELLED)
HOLD = timedelta(minutes=30)  # an item opened and left unfinished this long goes to the next


@dataclass(frozen=True)
class RunFilter:
    """Which runs a fill takes: of an agent (``""``: any), of an outcome (``""``: any that
    finished), with a failed tool call, created in the last ``days``; ``limit`` at most,
    newest first."""

    agent: str = ""
    outcome: str = ""
    tool_error: bool = False
    days: int = 7
    limit: int = 20


def _operator(actor: Any) -> None:
    if not is_operator(actor):
        raise PermissionDenied("annotation queues are operators' tools")


def queue_create(*, name: str, description: str, definitions: list[str], actor: Any
                 ) -> AnnotationQueue:  # fmt: skip
    """A new queue asking for the scores named ``definitions`` (enabled ones)."""
    _operator(actor)
    found = list(ScoreDefinition.objects.filter(name__in=definitions, enabled=True))
    if not found or len(found) != len(set(definitions)):
        raise ValidationError({"definitions": ["one or more scores, each one that is kept"]})
    queue = AnnotationQueue(name=name, description=description, created_by=actor)
    try:
        queue.full_clean(exclude=["created_by"])
    except ValidationError as exc:
        raise ValidationError(exc.message_dict) from None
    with transaction.atomic():
        queue.save()
        queue.definitions.set(found)
        audit_record(actor=actor, action="queue.create", target_type=TARGET,
                     target_id=queue.name, after={"definitions": sorted(definitions)})  # fmt: skip
    return queue


def queue_fill(*, queue: AnnotationQueue, runs: RunFilter, actor: Any) -> int:
    """Add the runs ``runs`` takes that the queue does not have yet; how many were added."""
    _operator(actor)
    if not 1 <= runs.limit <= FILL_MAX or not 1 <= runs.days <= 366:
        raise ValidationError({"limit": [f"1 to {FILL_MAX} runs, of the last 1 to 366 days"]})
    found = Run.objects.filter(
        status__in=[runs.outcome] if runs.outcome else FINISHED,
        created_at__gte=timezone.now() - timedelta(days=runs.days),
    ).exclude(queue_items__queue=queue)
    if runs.agent:
        found = found.filter(agent_name=runs.agent)
    if runs.tool_error:
        found = found.filter(pk__in=runs_with_tool_errors())
    chosen = list(found.order_by("-created_at", "-pk").values("pk", "session_id")[: runs.limit])
    added = _add(queue, chosen)
    audit_record(actor=actor, action="queue.fill", target_type=TARGET, target_id=queue.name,
                 after={"filter": runs.__dict__, "added": added})  # fmt: skip
    return added


def queue_add_session(*, queue: AnnotationQueue, session_id: str, actor: Any) -> int:
    """Add a session's finished runs by hand; how many were added."""
    _operator(actor)
    chosen = list(Run.objects.filter(session_id=session_id, status__in=FINISHED)
                  .exclude(queue_items__queue=queue).order_by("created_at", "pk")
                  .values("pk", "session_id")[:FILL_MAX])  # fmt: skip
    if not chosen and not Run.objects.filter(session_id=session_id).exists():
        raise ValidationError({"session": ["no session of that id has runs"]})
    added = _add(queue, chosen)
    audit_record(actor=actor, action="queue.fill", target_type=TARGET, target_id=queue.name,
                 after={"session": session_id, "added": added})  # fmt: skip
    return added


def _add(queue: AnnotationQueue, chosen: list[Any]) -> int:
    with transaction.atomic():
        last = queue.items.aggregate(last=Max("position"))["last"] or 0
        items = [QueueItem(queue=queue, run_id=row["pk"], session_id=row["session_id"],
                           position=last + n) for n, row in enumerate(chosen, start=1)]  # fmt: skip
        QueueItem.objects.bulk_create(items, ignore_conflicts=True)
    return len(items)


def _free(now: Any) -> Q:
    """Items nobody has, or whose reviewer has held them past :data:`HOLD` unfinished."""
    return Q(assigned_to__isnull=True) | Q(assigned_at__lt=now - HOLD) | Q(assigned_at__isnull=True)


def queue_next(*, queue: AnnotationQueue, actor: Any) -> QueueItem | None:
    """The reviewer's next item: the one they have open (held anew from now), else the first
    pending one nobody has — or that its reviewer has held past :data:`HOLD` — now theirs.
    ``None`` when none is left."""
    _operator(actor)
    now = timezone.now()
    with transaction.atomic():
        mine = queue.items.filter(status=QueueItem.Status.PENDING, assigned_to=actor)
        item = mine.order_by("position").first()
        if item is not None:
            QueueItem.objects.filter(pk=item.pk).update(assigned_at=now)
            item.assigned_at = now
            return item
        free = queue.items.filter(_free(now), status=QueueItem.Status.PENDING)
        for candidate in free.order_by("position")[:20]:
            # Compare-and-set: two reviewers opening at once get different items.
            if QueueItem.objects.filter(_free(now), pk=candidate.pk).update(
                assigned_to=actor, assigned_at=now
            ):
                candidate.assigned_to, candidate.assigned_at = actor, now
                return candidate
    return None


def queue_item_release(*, item: QueueItem, actor: Any) -> QueueItem:
    """Take a pending ``item`` back from the reviewer who has it, for the next reviewer who
    opens the queue (audited: ``queue.release``). ``ValidationError`` when it is reviewed."""
    _operator(actor)
    if item.status != QueueItem.Status.PENDING:
        raise ValidationError({"item": ["it is reviewed already"]})
    held_by = item.assigned_to.get_username() if item.assigned_to else ""
    with transaction.atomic():
        QueueItem.objects.filter(pk=item.pk).update(assigned_to=None, assigned_at=None)
        audit_record(actor=actor, action="queue.release", target_type=TARGET,
                     target_id=item.queue.name, before={"item": item.position, "held_by": held_by},
                     after={"item": item.position, "held_by": ""})  # fmt: skip
    item.assigned_to, item.assigned_at = None, None
    return item


def queue_item_finish(*, item: QueueItem, actor: Any, skipped: bool = False) -> QueueItem:
    """The reviewer is done with ``item`` (or skips it)."""
    _operator(actor)
    item.status = QueueItem.Status.SKIPPED if skipped else QueueItem.Status.DONE
    item.done_by, item.done_at = actor, timezone.now()
    item.save(update_fields=["status", "done_by", "done_at"])
    return item


def queue_progress(*, queue: AnnotationQueue) -> dict[str, int]:
    """How many items: in all, done, skipped, pending."""
    counts = queue.items.aggregate(
        total=Count("pk"), done=Count("pk", filter=Q(status=QueueItem.Status.DONE)),
        skipped=Count("pk", filter=Q(status=QueueItem.Status.SKIPPED)),
    )  # fmt: skip
    counts["pending"] = counts["total"] - counts["done"] - counts["skipped"]
    return counts
