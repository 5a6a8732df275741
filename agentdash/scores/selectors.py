"""Reads of scores: a session's, and the definitions people may score with."""

from __future__ import annotations

import math
import re
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import Avg, Count, FloatField, OuterRef, Q, QuerySet, Subquery, Sum

from agentdash.changes.items import Item, RowKey, items_of_rows
from agentdash.scores.models import (
    AnnotationQueue,
    Evaluation,
    EvaluatorRule,
    QueueItem,
    Score,
    ScoreDefinition,
)


def score_snapshot(score: Score) -> dict[str, Any]:
    """A score as the audit log, the API and the pages say it."""
    return {
        "id": score.pk, "name": score.definition.name, "kind": score.definition.kind,
        "value": score.label or score.value, "target": score.target, "run": score.run_id,
        "invocation_id": score.run.invocation_id if score.run_id and score.run else "",
        "trace_id": score.trace_id, "span_id": score.span_id, "comment": score.comment,
        "source": score.source, "author": score.author_name,
        "at": score.updated_at.isoformat() if score.updated_at else None,
    }  # fmt: skip


def session_scores(*, session_id: str) -> list[dict[str, Any]]:
    """The scores of a session (of it, its runs and spans), oldest first."""
    rows = Score.objects.filter(session_id=session_id).select_related("definition", "run")
    return [score_snapshot(score) for score in rows.order_by("created_at", "pk")]


def definitions_enabled() -> list[dict[str, Any]]:
    """The definitions that take scores: name, kind, description, range, categories."""
    return [
        {"name": d.name, "kind": d.kind, "description": d.description, "minimum": d.minimum,
         "maximum": d.maximum, "categories": list(d.categories or [])}
        for d in ScoreDefinition.objects.filter(enabled=True).order_by("name")
    ]  # fmt: skip


def scores_load(refs: set[RowKey]) -> dict[RowKey, Item]:
    """Scores as change items (kind ``score``, ref the score's id): the score as the API says
    it; a score taken back has no data (the page reads the session's scores again)."""
    ids = {int(ref) for _, ref in refs if ref.isdigit()}
    rows = Score.objects.filter(pk__in=ids).select_related("definition", "run")
    return items_of_rows(
        refs, rows, session_of=lambda s: s.session_id, ref_of=lambda s: str(s.pk),
        item_of=score_snapshot,
    )  # fmt: skip


FEEDBACK = "user_feedback"
"""The chat's thumbs: a yes/no definition the migration makes (turned off, the chat shows none)."""


def feedback_enabled() -> bool:
    return ScoreDefinition.objects.filter(name=FEEDBACK, enabled=True).exists()


def feedback_of_outer_session(*, up: bool) -> QuerySet[Score]:
    """The thumbs up (or down) given in the session of ``OuterRef("pk")``."""
    return Score.objects.filter(
        session_id=OuterRef("pk"), definition__name=FEEDBACK, value=1.0 if up else 0.0
    )


def score_of_session(*, session_id: str, score_id: int) -> Score | None:
    """The score ``score_id`` if it is of that session."""
    return (
        Score.objects.filter(pk=score_id, session_id=session_id)
        .select_related("definition", "run")
        .first()
    )


def score_ids_of(*, session_id: str, user_id: int | None) -> set[int]:
    """The ids of the scores ``user_id`` gave in that session."""
    found = Score.objects.filter(session_id=session_id, author_id=user_id)
    return set(found.values_list("pk", flat=True))


_COMPARISON = re.compile(r"^\s*(<=|>=|<|>|=)?\s*(-?\d+(?:\.\d+)?)\s*$")
_LOOKUPS = {"<": "lt", "<=": "lte", ">": "gt", ">=": "gte", "=": "exact"}


def definition_names() -> list[str]:
    """Every definition's name (those turned off too: their scores stay), by name."""
    return list(ScoreDefinition.objects.order_by("name").values_list("name", flat=True))


def score_condition(*, name: str, said: str) -> Q:
    """The scores of the definition ``name`` that ``said`` asks for (``Q`` over scores): any
    (blank), ``yes``/``no``, a category, or a number with an optional comparison (``<3``,
    ``>= 4``, ``5``). ``ValidationError`` for a name no definition has, or a condition its
    kind cannot take."""
    definition = ScoreDefinition.objects.filter(name=name[:64]).first()
    if definition is None:
        raise ValidationError(f"no score named {name[:64]!r}")
    found = Q(definition=definition)
    said = said.strip()
    if not said:
        return found
    kind = definition.kind
    if kind == ScoreDefinition.Kind.BOOLEAN:
        if said.lower() not in ("yes", "no"):
            raise ValidationError(f"{definition.name} is yes or no")
        return found & Q(label=said.lower())
    if kind == ScoreDefinition.Kind.CATEGORY:
        if said not in (definition.categories or []):
            shown = ", ".join(definition.categories or [])[:300]
            raise ValidationError(f"{definition.name} is one of: {shown}")
        return found & Q(label=said)
    match = _COMPARISON.match(said)
    if not match or not math.isfinite(float(match.group(2))):
        raise ValidationError(f"{definition.name}: a number, or <, <=, >, >= and a number")
    lookup = _LOOKUPS[match.group(1) or "="]
    return found & Q(**{f"value__{lookup}": float(match.group(2))})


def score_mean_of_outer_session(*, name: str) -> Any:
    """For annotating sessions: the mean of their scores named ``name`` (``None``: none)."""
    rows = Score.objects.filter(session_id=OuterRef("pk"), definition__name=name)
    mean = rows.order_by().values("session_id").annotate(m=Avg("value")).values("m")[:1]
    return Subquery(mean, output_field=FloatField())


def sessions_scored(*, condition: Q) -> QuerySet[Score, Any]:
    """The ids (``session_id``) of the sessions with a score that meets ``condition``."""
    return Score.objects.filter(condition).values("session_id")


def evaluator_rules_summary() -> list[dict[str, Any]]:
    """Each rule with how its evaluations went: scored, failed, running, and what its judge
    spent (tokens, cost), for the evaluations page."""
    statuses = Evaluation.Status
    rows = EvaluatorRule.objects.select_related("definition").annotate(
        scored=Count("evaluations", filter=Q(evaluations__status=statuses.SCORED)),
        failed=Count("evaluations", filter=Q(evaluations__status=statuses.FAILED)),
        running=Count("evaluations", filter=Q(evaluations__status=statuses.RUNNING)),
        judge_input=Sum("evaluations__input_tokens"),
        judge_output=Sum("evaluations__output_tokens"),
        judge_cost=Sum("evaluations__cost_usd"),
    )
    return [{"rule": r, "scored": r.scored, "failed": r.failed, "running": r.running,
             "judge_input": r.judge_input, "judge_output": r.judge_output,
             "judge_cost": r.judge_cost} for r in rows.order_by("name")]  # fmt: skip


def evaluations_recent(*, rule: str = "", status: str = "", limit: int = 100) -> list[Any]:
    """The latest evaluations (of one rule, of one status), newest first."""
    rows = Evaluation.objects.select_related("rule", "score", "run")
    if rule:
        rows = rows.filter(rule__name=rule)
    if status:
        rows = rows.filter(status=status)
    return list(rows.order_by("-started_at", "-pk")[:limit])


EVALUATION_STATUSES: list[str] = list(Evaluation.Status.values)


def queues_with_progress() -> list[dict[str, Any]]:
    """Every annotation queue with its counts (total, done, skipped, pending) and scores."""
    rows = AnnotationQueue.objects.prefetch_related("definitions").annotate(
        total=Count("items"),
        done=Count("items", filter=Q(items__status=QueueItem.Status.DONE)),
        skipped=Count("items", filter=Q(items__status=QueueItem.Status.SKIPPED)),
    )
    return [{"queue": q, "total": q.total, "done": q.done, "skipped": q.skipped,
             "pending": q.total - q.done - q.skipped,
             "definitions": [d.name for d in q.definitions.all()]}
            for q in rows.order_by("name")]  # fmt: skip


def queue_get(*, name: str) -> AnnotationQueue | None:
    return AnnotationQueue.objects.filter(name=name[:64]).prefetch_related("definitions").first()


def queue_items(*, queue: AnnotationQueue, limit: int = 500) -> list[dict[str, Any]]:
    """The queue's items in order, each with its run, who has or reviewed it, and the scores
    of the queue's definitions its run was given (name → [(value, author)])."""
    items = list(queue.items.select_related("run", "assigned_to", "done_by")
                 .order_by("position")[:limit])  # fmt: skip
    names = [d.name for d in queue.definitions.all()]
    given: dict[int, dict[str, list[tuple[Any, str]]]] = {}
    runs = [i.run_id for i in items]
    scores = Score.objects.filter(run_id__in=runs, definition__name__in=names)
    scores = scores.select_related("definition")
    for score in scores.order_by("created_at"):
        by_name = given.setdefault(score.run_id or 0, {})
        by_name.setdefault(score.definition.name, []).append(
            (score.label or score.value, score.author_name)
        )
    return [{"item": i, "scores": given.get(i.run_id, {})} for i in items]


def queue_item_get(*, queue: AnnotationQueue, item_id: int) -> QueueItem | None:
    return queue.items.filter(pk=item_id).select_related("run", "session").first()


ScoreRow = tuple[float, str, str, float, str, float | None, float | None]


def scores_between(
    *, start: Any, end: Any, sessions: QuerySet[Any] | None = None
) -> list[ScoreRow]:
    """The scores given in ``[start, end)`` (of ``sessions`` when given): (Unix time, name,
    kind, stored value, label, the definition's minimum and maximum), oldest first."""
    rows = Score.objects.filter(updated_at__gte=start, updated_at__lt=end)
    if sessions is not None:
        rows = rows.filter(session__in=sessions)
    found = rows.order_by("updated_at").values_list(
        "updated_at", "definition__name", "definition__kind", "value", "label",
        "definition__minimum", "definition__maximum",
    )  # fmt: skip
    return [(at.timestamp(), name, kind, value, label, low, high)
            for at, name, kind, value, label, low, high in found]  # fmt: skip


def score_share(kind: str, value: float, low: float | None, high: float | None) -> float | None:
    """A score as a share of its best (0 to 1): yes is 1, no 0; a number where it lies in its
    range; ``None`` for a category (it has no order)."""
    if kind == ScoreDefinition.Kind.BOOLEAN:
        return value
    if kind == ScoreDefinition.Kind.NUMBER and low is not None and high is not None and high > low:
        return (value - low) / (high - low)
    return None
