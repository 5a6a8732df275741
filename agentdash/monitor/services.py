"""Writes of the monitor app: alert rules saved and deleted, each audited in the transaction
that makes the change. A firing rule that is turned off, changed or deleted resolves first,
so that its webhook's receiver is not left with an alert nobody will end."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from agentdash.core.services import Actor, audit_record
from agentdash.monitor.alerts import rule_snapshot, rule_turned_off
from agentdash.monitor.models import AlertEvent, AlertRule

TARGET = "monitor.alertrule"


def rule_save(*, rule: AlertRule, actor: Actor, before: dict[str, Any] | None = None) -> None:
    """Save ``rule`` as edited (``before``: its snapshot as it was, for an existing rule).
    A changed rule starts again from ``ok``: what it read no longer says what it reads."""
    with transaction.atomic():
        if rule.pk is None:
            if actor is not None and actor.is_authenticated:
                rule.created_by = actor
            rule.save()
            audit_record(actor=actor, action="alert_rule.create", target_type=TARGET,
                         target_id=str(rule.pk), after=rule_snapshot(rule))  # fmt: skip
            return
        current = AlertRule.objects.select_for_update().get(pk=rule.pk)
        rule.state, rule.state_since, rule.value = current.state, current.state_since, current.value
        after = rule_snapshot(rule)
        if before is not None and _condition(before) != _condition(after):
            reason = "the rule was turned off" if not rule.enabled else "the rule was changed"
            rule_turned_off(rule, now=timezone.now(), reason=reason)
            rule.checked_at = None
        rule.save()
        audit_record(actor=actor, action="alert_rule.change", target_type=TARGET,
                     target_id=str(rule.pk), before=before, after=after)  # fmt: skip


def _condition(snapshot: dict[str, Any]) -> tuple[Any, ...]:
    keys = ("metric", "comparison", "threshold", "window_s", "for_s", "filters", "enabled")
    return tuple(repr(snapshot.get(k)) for k in keys)


def rule_delete(*, rule: AlertRule, actor: Actor) -> None:
    """Delete ``rule``; its events stay, listed under its name. A firing rule resolves
    first (its receivers are told it was deleted)."""
    with transaction.atomic():
        before = rule_snapshot(rule)
        rule_turned_off(rule, now=timezone.now(), reason="the rule was deleted")
        rule.delete()
        audit_record(actor=actor, action="alert_rule.delete", target_type=TARGET,
                     target_id=str(before["id"]), before=before)  # fmt: skip


def delivery_retry(*, event: AlertEvent, actor: Actor) -> bool:
    """Give a failed delivery its attempts again, from now; whether there was one to retry."""
    with transaction.atomic():
        retried = AlertEvent.objects.filter(
            pk=event.pk, delivery=AlertEvent.Delivery.FAILED
        ).update(delivery=AlertEvent.Delivery.PENDING, attempts=0,
                 next_attempt_at=timezone.now())  # fmt: skip
        if retried:
            after = {"event_id": str(event.event_id)}
            audit_record(actor=actor, action="alert_delivery.retry", target_type=TARGET,
                         target_id=str(event.rule_id), after=after)  # fmt: skip
    return bool(retried)
