"""Alert rules checked: each enabled rule's metric read over its window and its state moved —
``ok`` → ``pending`` (over the threshold, for less than the rule's ``for_s``) → ``firing``
→ ``ok`` again once it no longer is. Firing and resolving each make one
:class:`~agentdash.monitor.models.AlertEvent` (and its webhook delivery, ``webhooks``),
written with the state change that caused it and audited with it.

Every server and worker process checks (``alerts_forever``, a run-host service): a process
takes a rule for a period by a conditional update of its ``checked_at``, and a state moves by
one conditional on the state it was read in — so two processes never make the same event.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from agentdash.core.conf import agentdash_setting
from agentdash.core.services import audit_record
from agentdash.core.site_url import site_base_url
from agentdash.core.threads import in_worker_thread
from agentdash.monitor.alert_metrics import METRICS, breached, metric_value
from agentdash.monitor.models import AlertEvent, AlertRule
from agentdash.monitor.webhooks import deliveries_send

logger = logging.getLogger(__name__)

FILTER_FIELDS = ("agent", "model", "tool", "source", "owner")


def rule_snapshot(rule: AlertRule) -> dict[str, Any]:
    """The rule as its audit entries and webhooks give it."""
    metric = METRICS.get(rule.metric)
    return {
        "id": rule.pk,
        "name": rule.name,
        "metric": rule.metric,
        "metric_label": metric.label if metric else rule.metric,
        "unit": metric.unit if metric else "",
        "comparison": rule.comparison,
        "threshold": rule.threshold,
        "window_s": rule.window_s,
        "for_s": rule.for_s,
        "filters": {f: getattr(rule, f) for f in FILTER_FIELDS if getattr(rule, f)},
        "webhook": bool(rule.webhook_url),
        "enabled": rule.enabled,
    }


def _links(rule: AlertRule) -> dict[str, str]:
    base = site_base_url().rstrip("/")
    filters = {f: getattr(rule, f) for f in FILTER_FIELDS if getattr(rule, f)}
    query = urlencode({"range": "1h" if rule.window_s <= 3600 else "24h", **filters})
    return {
        "rule": f"{base}{reverse('monitor_alerts')}#rule-{rule.pk}",
        "monitor": f"{base}{reverse('monitor')}?{query}",
    }


def event_record(
    rule: AlertRule, *, kind: str, value: float | None, at: datetime, since: datetime | None,
    reason: str = "",
) -> AlertEvent:  # fmt: skip
    """Record that ``rule`` fired or resolved (call in the transaction of the state change):
    the event, its webhook body, its delivery and its audit entry."""
    event = AlertEvent(
        rule=rule, rule_name=rule.name, webhook_url=rule.webhook_url, kind=kind, at=at,
        value=value,
    )  # fmt: skip
    event.body = {
        "event_id": str(event.event_id),
        "type": f"alert.{kind}",
        "at": at.isoformat(),
        "since": since.isoformat() if since else None,
        "value": value,
        "reason": reason,
        "rule": rule_snapshot(rule),
        "links": _links(rule),
    }
    if rule.webhook_url:
        event.delivery = AlertEvent.Delivery.PENDING
        event.next_attempt_at = at
    else:
        event.delivery = AlertEvent.Delivery.NONE
    event.save()
    audit_record(
        actor=None, action=f"alert.{kind}", target_type="monitor.alertrule",
        target_id=str(rule.pk), after={"value": value, "event_id": str(event.event_id)},
        reason=reason,
    )  # fmt: skip
    return event


def _claim(rule: AlertRule, now: datetime, period: timedelta) -> bool:
    """Take ``rule`` for this period (no other process checked it within most of it)."""
    fresh = Q(checked_at__isnull=True) | Q(checked_at__lte=now - period * 0.8)
    return bool(AlertRule.objects.filter(fresh, pk=rule.pk).update(checked_at=now))


def rule_check(rule: AlertRule, *, now: datetime) -> AlertEvent | None:
    """Read ``rule``'s metric at ``now`` and move its state; the event made, if any."""
    try:
        value = metric_value(rule, now=now)
    except Exception as exc:  # the database away, most likely: the state stays as it was
        logger.exception("checking alert rule %s failed", rule.pk)
        AlertRule.objects.filter(pk=rule.pk).update(check_error=str(exc)[:500] or repr(exc))
        return None
    state, since = rule.state, rule.state_since
    target = _next_state(rule, over=breached(rule, value), now=now)
    fields: dict[str, Any] = {"value": value, "check_error": ""}
    if target == state:
        AlertRule.objects.filter(pk=rule.pk).update(**fields)
        return None
    with transaction.atomic():
        moved = AlertRule.objects.filter(pk=rule.pk, state=state)
        if not moved.update(**fields, state=target, state_since=now):
            return None  # another process moved it first
        rule.state, rule.state_since, rule.value = target, now, value
        if target == AlertRule.State.FIRING:  # since the threshold was first crossed
            began = since if state == AlertRule.State.PENDING and since else now
            return event_record(rule, kind=AlertEvent.Kind.FIRING, value=value, at=now,
                                since=began)  # fmt: skip
        if state == AlertRule.State.FIRING:  # resolved: since it fired
            return event_record(rule, kind=AlertEvent.Kind.RESOLVED, value=value, at=now,
                                since=since)  # fmt: skip
        return None  # ok ↔ pending: nobody is told


def _next_state(rule: AlertRule, *, over: bool, now: datetime) -> str:
    """``ok`` → ``pending`` (for a rule with ``for_s``) → ``firing`` while ``over``; any
    state → ``ok`` once not."""
    if not over:
        return AlertRule.State.OK
    if rule.state == AlertRule.State.OK:
        return AlertRule.State.PENDING if rule.for_s else AlertRule.State.FIRING
    if rule.state == AlertRule.State.PENDING:
        held = rule.state_since is None or now - rule.state_since >= timedelta(seconds=rule.for_s)
        return AlertRule.State.FIRING if held else AlertRule.State.PENDING
    return str(rule.state)


def alerts_check(*, now: datetime | None = None, force: bool = False) -> list[AlertEvent]:
    """Check every enabled rule not checked by another process this period (``force``:
    every enabled rule); the events made."""
    now = now or timezone.now()
    period = timedelta(seconds=float(agentdash_setting("ALERT_CHECK_S")))
    made = []
    for rule in AlertRule.objects.filter(enabled=True):
        if not force and not _claim(rule, now, period):
            continue
        event = rule_check(rule, now=now)
        if event is not None:
            made.append(event)
    return made


def rule_turned_off(rule: AlertRule, *, now: datetime, reason: str) -> AlertEvent | None:
    """A firing rule that was turned off or changed resolves (its receivers are told why);
    call in the transaction of the change."""
    if rule.state != AlertRule.State.FIRING:
        rule.state, rule.state_since = AlertRule.State.OK, now
        return None
    since = rule.state_since
    rule.state, rule.state_since = AlertRule.State.OK, now
    return event_record(
        rule, kind=AlertEvent.Kind.RESOLVED, value=rule.value, at=now, since=since, reason=reason
    )


def firing_rules() -> list[AlertRule]:
    """The rules firing now, the longest firing first (the header's alert for operators)."""
    return list(AlertRule.objects.filter(state=AlertRule.State.FIRING).order_by("state_since"))


async def alerts_forever() -> None:
    """Check the rules every ``ALERT_CHECK_S`` and send what webhooks are due (every second
    or so, for the retries' backoff), until cancelled."""
    check = in_worker_thread(alerts_check)
    send = in_worker_thread(deliveries_send)
    loop = asyncio.get_running_loop()
    next_check = loop.time()
    while True:
        period = float(agentdash_setting("ALERT_CHECK_S"))
        if loop.time() >= next_check:
            next_check = loop.time() + period
            try:
                await check()
            except Exception:
                logger.exception("checking the alert rules failed; trying again")
        try:
            await send()
        except Exception:
            logger.exception("sending alert webhooks failed; trying again")
        await asyncio.sleep(max(0.05, min(1.0, period, next_check - loop.time())))
