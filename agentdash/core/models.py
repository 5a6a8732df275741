"""The audit trail: who changed what, when, from what to what, and why."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class AuditEntry(models.Model):
    """One operator or admin action. Rows are only ever added (``audit_record``); the app
    offers no way to edit or delete them."""

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    actor_label = models.CharField(max_length=150, help_text="Username at the time, kept.")
    action = models.CharField(max_length=64, db_index=True)
    target_type = models.CharField(max_length=64)
    # Room for the longest target any service writes: a callback switch's
    # "agent (128):callback (255)@session (128)".
    target_id = models.CharField(max_length=600)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    reason = models.TextField(blank=True)
    request_id = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["target_type", "target_id", "at"])]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        when = f"{self.at:%Y-%m-%d %H:%M:%S}"
        return f"{when} {self.actor_label} {self.action} {self.target_type}:{self.target_id}"


class ApiToken(models.Model):
    """A person's token for scripts: ``Authorization: Bearer <token>`` acts as its user on
    the endpoints that take tokens (docs/SCORES.md: the scores API). Only a hash is kept;
    the token is shown once, when made; a revoked token is refused from then on."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="api_tokens")  # fmt: skip
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, unique=True, editable=False)
    key_hash = models.CharField(max_length=64, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} · {self.prefix}…{' (revoked)' if self.revoked_at else ''}"
