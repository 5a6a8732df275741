"""Scores given and taken back, and definitions kept: each checked against its definition
and its session, authorized, audited in the transaction that writes it.

Who may score: a session's owner and operators (from the session page, the chat or the
API); evaluators write as no person (``actor`` ``None``, their name in ``author``). The
same author scoring the same thing with the same definition from the same source replaces
their score: a person changes their mind, an evaluator runs again."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from agentdash.agent_sessions.models import AgentSession
from agentdash.changes.models import SessionChange
from agentdash.changes.services import session_change_next
from agentdash.core.hygiene import text_problem
from agentdash.core.permissions import is_operator, owner_or_operator_required
from agentdash.core.services import audit_record
from agentdash.runs.models import Run
from agentdash.scores.models import (
    CATEGORIES_MAX,
    CATEGORY_MAX,
    COMMENT_MAX,
    Score,
    ScoreDefinition,
)
from agentdash.scores.selectors import score_snapshot
from agentdash.spans.models import Span

SOURCES = Score.Source
TARGETS = Score.Target
SCORE_TARGET = "scores.score"
DEFINITION_TARGET = "scores.definition"
YES, NO = ("yes", "true"), ("no", "false")


@dataclass(frozen=True)
class ScoreGiven:
    """What is said: a definition's ``name``, its ``value``, of what (``target``: the session,
    a run by id, a span by trace and span id), with a ``comment``."""

    name: str
    value: Any
    target: str = Score.Target.SESSION
    run_id: int | None = None
    trace_id: str = ""
    span_id: str = ""
    comment: str = ""


def definition_check(definition: ScoreDefinition) -> None:
    """``ValidationError`` naming each field a definition of its kind cannot have."""
    errors: dict[str, str] = {}
    kind = definition.kind
    if kind == ScoreDefinition.Kind.NUMBER:
        low, high = definition.minimum, definition.maximum
        if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
            errors["minimum"] = "a number's range: a finite minimum and maximum"
        elif low >= high:
            errors["maximum"] = "greater than the minimum"
    if kind == ScoreDefinition.Kind.CATEGORY:
        found = definition.categories
        if not isinstance(found, list) or not 1 <= len(found) <= CATEGORIES_MAX:
            errors["categories"] = f"a list of 1 to {CATEGORIES_MAX} categories"
        elif any(not isinstance(c, str) or not c.strip() or len(c) > CATEGORY_MAX
                 or text_problem(c) for c in found):  # fmt: skip
            errors["categories"] = f"each a word or words, at most {CATEGORY_MAX} characters"
        elif len(set(found)) != len(found):
            errors["categories"] = "each once"
    elif definition.categories:
        errors["categories"] = "only a category score has categories"
    if kind != ScoreDefinition.Kind.NUMBER and (
        definition.minimum is not None or definition.maximum is not None
    ):
        errors["minimum"] = "only a number has a range"
    if errors:
        raise ValidationError({k: [v] for k, v in errors.items()})


def definition_save(*, definition: ScoreDefinition, actor: Any) -> ScoreDefinition:
    """Save ``definition`` (checked: :func:`definition_check`; a definition with scores keeps
    its name and kind), audited. Operators keep definitions (the admin)."""
    if not is_operator(actor):
        raise PermissionDenied("only operators keep score definitions")
    definition_check(definition)
    with transaction.atomic():
        before = ScoreDefinition.objects.filter(pk=definition.pk).first() if definition.pk else None
        renamed = before is not None and (before.name, before.kind) != (
            definition.name, definition.kind)  # fmt: skip
        if renamed and before is not None and before.scores.exists():
            raise ValidationError({"kind": ["its scores were given as it is: keep the name "
                                                "and kind, or make a new definition"]})  # fmt: skip
        definition.save()
        audit_record(
            actor=actor, action="score_definition.save", target_type=DEFINITION_TARGET,
            target_id=str(definition.pk), before=None if before is None else _described(before),
            after=_described(definition),
        )  # fmt: skip
    return definition


def _described(definition: ScoreDefinition) -> dict[str, Any]:
    return {"name": definition.name, "kind": definition.kind, "enabled": definition.enabled,
            "minimum": definition.minimum, "maximum": definition.maximum,
            "categories": definition.categories, "description": definition.description}  # fmt: skip


def value_of(definition: ScoreDefinition, value: Any) -> tuple[float, str]:
    """The stored value and label of ``value`` as ``definition`` reads it; ``ValidationError``
    (field ``value``) for one it cannot take."""
    kind = definition.kind
    if kind == ScoreDefinition.Kind.BOOLEAN:
        said = value.strip().lower() if isinstance(value, str) else value
        if said is True or said in YES:
            return 1.0, "yes"
        if said is False or said in NO:
            return 0.0, "no"
        raise ValidationError({"value": [f"{definition.name} is yes or no (true or false)"]})
    if kind == ScoreDefinition.Kind.NUMBER:
        low, high = definition.minimum, definition.maximum
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValidationError({"value": [f"{definition.name} is a number"]})
        if (
            not math.isfinite(value)
            or not (low is not None and high is not None)
            or not (low <= value <= high)
        ):
            raise ValidationError({"value": [f"{definition.name} is from {low:g} to {high:g}"]})
        return float(value), ""
    categories = list(definition.categories or [])
    if not isinstance(value, str) or value not in categories:
        shown = ", ".join(categories)[:300]
        raise ValidationError({"value": [f"{definition.name} is one of: {shown}"]})
    return float(categories.index(value)), value


def score_record(
    *, session: AgentSession, given: ScoreGiven, source: str, actor: Any, author: str = ""
) -> tuple[Score, bool]:
    """Record ``given`` on ``session`` from ``source`` (a :class:`Score.Source`) by ``actor``
    (``None`` for an evaluator, named by ``author``). ``PermissionDenied`` unless the actor
    owns the session or is an operator; ``ValidationError`` naming the field for an unknown
    or disabled score, a value its definition cannot take, a run or span not of the
    session, a comment too long. Nothing is written when it refuses. Returns the score and
    whether it is new (not a score of the same author's replaced)."""
    if source not in Score.Source.values:
        raise ValueError(f"no score source {source!r}")
    if actor is None and source != Score.Source.EVALUATOR:
        raise PermissionDenied("only an evaluator scores as no one")
    if actor is not None:
        owner_or_operator_required(session, actor)
    definition = ScoreDefinition.objects.filter(name=str(given.name)[:64], enabled=True).first()
    if definition is None:
        raise ValidationError({"name": [f"no score named {str(given.name)[:64]!r} is kept"]})
    value, label = value_of(definition, given.value)
    comment = _comment(given.comment)
    target = _target(session, given)
    who = str(getattr(actor, "pk", "") or "") if actor is not None else author[:150]
    key = f"{target}:{source}:{who}"[:255]
    with transaction.atomic():
        before = Score.objects.filter(definition=definition, session=session, key=key).first()
        score, made = Score.objects.update_or_create(
            definition=definition, session=session, key=key,
            defaults={
                "target": given.target,
                "run_id": given.run_id if given.target == Score.Target.RUN else None,
                "trace_id": given.trace_id if given.target == Score.Target.SPAN else "",
                "span_id": given.span_id if given.target == Score.Target.SPAN else "",
                "value": value, "label": label, "comment": comment,
                "source": source, "author": actor,
                "author_name": author[:150] or (actor.get_username() if actor else ""),
            },
        )  # fmt: skip
        audit_record(
            actor=actor, action="score.record", target_type=SCORE_TARGET,
            target_id=f"{session.pk}:{score.pk}",
            before=None if before is None else score_snapshot(before),
            after=score_snapshot(score),
        )  # fmt: skip
        _changed(score.session_id, score.pk)
    return score, made


def score_delete(*, score: Score, actor: Any) -> None:
    """Take ``score`` back: its author, or an operator; audited."""
    if not (is_operator(actor) or (score.author_id and score.author_id == actor.pk)):
        raise PermissionDenied("only the score's author or an operator may take it back")
    with transaction.atomic():
        audit_record(
            actor=actor, action="score.delete", target_type=SCORE_TARGET,
            target_id=f"{score.session_id}:{score.pk}", before=score_snapshot(score),
        )  # fmt: skip
        gone = score.pk
        score.delete()
        _changed(score.session_id, gone)


def _changed(session_id: str, score_id: int) -> None:
    """A change of the session (kind ``score``): its page and the sessions list hear of it."""
    session_change_next(session_id=session_id, kind=SessionChange.Kind.SCORE, ref=str(score_id))


def _comment(comment: Any) -> str:
    if not isinstance(comment, str):
        raise ValidationError({"comment": ["text"]})
    problem = text_problem(comment)
    if problem or len(comment) > COMMENT_MAX:
        raise ValidationError({"comment": [problem or f"at most {COMMENT_MAX} characters"]})
    return comment


def _target(session: AgentSession, given: ScoreGiven) -> str:
    """What ``given`` scores, as a key; ``ValidationError`` if it is not of ``session``."""
    if given.target == Score.Target.SESSION:
        if given.run_id is not None or given.trace_id or given.span_id:
            raise ValidationError({"target": ["a session's score names no run or span"]})
        return "session"
    if given.target == Score.Target.RUN:
        if (
            not isinstance(given.run_id, int)
            or isinstance(given.run_id, bool)
            or not (Run.objects.filter(pk=given.run_id, session=session).exists())
        ):
            raise ValidationError({"run": ["no such run in this session"]})
        return f"run:{given.run_id}"
    if given.target == Score.Target.SPAN:
        ids = (given.trace_id, given.span_id)
        if not all(isinstance(i, str) and 0 < len(i) <= 32 and i.isalnum() for i in ids) or not (
            Span.objects.filter(session=session, trace_id=ids[0], span_id=ids[1]).exists()
        ):
            raise ValidationError({"span": ["no such span in this session"]})
        return f"span:{ids[0]}:{ids[1]}"
    raise ValidationError({"target": ["session, run or span"]})
