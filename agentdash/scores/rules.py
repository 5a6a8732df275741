"""Keeping online evaluator rules (operators): each checked — its sample rate, its evaluator's
config against the score it gives — and every save audited."""

from __future__ import annotations

import math
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from agentdash.core.permissions import is_operator
from agentdash.core.services import audit_record
from agentdash.scores.evaluator_checks import Target, config_check
from agentdash.scores.models import EvaluatorRule

RULE_TARGET = "scores.rule"


def evaluator_rule_check(rule: EvaluatorRule) -> None:
    """``ValidationError`` naming each field the rule cannot have; its config is stored as
    checked (defaults filled in)."""
    errors: dict[str, str] = {}
    rate = rule.sample_rate
    if (
        isinstance(rate, bool)
        or not isinstance(rate, int | float)
        or not (math.isfinite(rate) and 0 <= rate <= 1)
    ):
        errors["sample_rate"] = "a share from 0 to 1 (0.1: one run in ten)"
    definition = rule.definition if rule.definition_id else None
    if definition is None:
        errors["definition"] = "the score the rule gives"
    else:
        target = Target(definition.kind, definition.minimum, definition.maximum,
                        list(definition.categories or []))  # fmt: skip
        try:
            rule.config = config_check(rule.evaluator, rule.config, target)
        except ValueError as exc:
            errors["config"] = str(exc)
    if errors:
        raise ValidationError({k: [v] for k, v in errors.items()})


def evaluator_rule_save(*, rule: EvaluatorRule, actor: Any) -> EvaluatorRule:
    """Save ``rule`` (checked by :func:`evaluator_rule_check`), audited; operators only. It
    applies to the runs that end after it."""
    if not is_operator(actor):
        raise PermissionDenied("only operators keep evaluator rules")
    evaluator_rule_check(rule)
    with transaction.atomic():
        before = EvaluatorRule.objects.filter(pk=rule.pk).first() if rule.pk else None
        rule.save()
        audit_record(
            actor=actor, action="evaluator_rule.save", target_type=RULE_TARGET,
            target_id=str(rule.pk), before=None if before is None else _described(before),
            after=_described(rule),
        )  # fmt: skip
    return rule


def _described(rule: EvaluatorRule) -> dict[str, Any]:
    return {"name": rule.name, "enabled": rule.enabled, "agent": rule.agent_name,
            "outcome": rule.outcome, "sample_rate": rule.sample_rate,
            "evaluator": rule.evaluator, "config": rule.config,
            "definition": rule.definition.name if rule.definition_id else None}  # fmt: skip
