"""Alert rules an operator defines over the agents' numbers, and what became of them: each
time a rule fires or resolves (an :class:`AlertEvent`), and its delivery to the rule's
webhook."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models


class AlertRule(models.Model):
    """ "Fire when ``metric`` over the last ``window_s`` (of the sessions the filters keep) is
    ``comparison`` ``threshold``, for ``for_s`` at least"; resolve when it no longer is."""

    class Comparison(models.TextChoices):
        ABOVE = "above", "above"
        BELOW = "below", "below"

    class State(models.TextChoices):
        OK = "ok", "ok"
        PENDING = "pending", "pending (over the threshold, not yet for long enough)"
        FIRING = "firing", "firing"

    name = models.CharField(max_length=120, unique=True)
    metric = models.CharField(max_length=32, help_text="What the rule reads (alert_metrics).")
    comparison = models.CharField(
        max_length=8, choices=Comparison.choices, default=Comparison.ABOVE
    )
    threshold = models.FloatField(help_text="In the metric's unit (%, s, $, runs, minutes …).")
    window_s = models.PositiveIntegerField(
        default=300, help_text="The metric is read over the last this many seconds."
    )
    for_s = models.PositiveIntegerField(
        default=0, help_text="Fire only once the threshold is crossed this long (0: at once)."
    )
    agent = models.CharField(max_length=255, blank=True, help_text="Only this agent's sessions.")
    model = models.CharField(max_length=255, blank=True, help_text="Only this model's calls.")
    tool = models.CharField(max_length=255, blank=True, help_text="Only this tool's calls.")
    source = models.CharField(
        max_length=16, blank=True, help_text="local, ingested, or blank for both."
    )
    owner = models.CharField(max_length=150, blank=True, help_text="Only this user's sessions.")
    webhook_url = models.URLField(
        max_length=500, blank=True, help_text="Where firing and resolving are posted (signed)."
    )
    enabled = models.BooleanField(default=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )  # fmt: skip
    created_at = models.DateTimeField(auto_now_add=True)
    state = models.CharField(max_length=8, choices=State.choices, default=State.OK)
    state_since = models.DateTimeField(null=True, blank=True)
    value = models.FloatField(null=True, blank=True, help_text="The metric at the last check.")
    checked_at = models.DateTimeField(null=True, blank=True, db_index=True)
    check_error = models.TextField(blank=True, help_text="Why the last check failed, if it did.")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class AlertEvent(models.Model):
    """A rule fired or resolved; with the webhook body made then (sent as is on every
    attempt, so a receiver dedups by ``event_id``), where it goes and how its delivery went.
    Kept when its rule is deleted (a deleted firing rule's last event is its resolving)."""

    class Kind(models.TextChoices):
        FIRING = "firing"
        RESOLVED = "resolved"

    class Delivery(models.TextChoices):
        NONE = "none", "no webhook"
        PENDING = "pending", "to send"
        DELIVERED = "delivered", "delivered"
        FAILED = "failed", "failed: no more attempts"

    rule = models.ForeignKey(
        AlertRule, null=True, blank=True, on_delete=models.SET_NULL, related_name="events"
    )
    rule_name = models.CharField(max_length=120, help_text="The rule's name then.")
    webhook_url = models.URLField(max_length=500, blank=True, help_text="Where it is sent.")
    event_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    at = models.DateTimeField()
    value = models.FloatField(null=True, blank=True)
    body = models.JSONField(help_text="The webhook's JSON body.")
    delivery = models.CharField(max_length=9, choices=Delivery.choices)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [
            models.Index(
                fields=["next_attempt_at"],
                name="alert_delivery_due",
                condition=models.Q(delivery="pending"),
            )
        ]

    def __str__(self) -> str:
        return f"{self.rule_name} {self.kind} at {self.at:%Y-%m-%d %H:%M:%S}"
