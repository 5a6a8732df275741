"""Ingest keys: what an outside OpenTelemetry sender shows to write spans."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class IngestKey(models.Model):
    """A secret that lets a sender write spans to ``/v1/traces``, bound to an ``owner`` (whose
    sessions the spans land in) and a ``project`` (their sessions' app name). Only a hash is
    kept; the key is shown once, when it is made. A revoked key is refused from then on."""

    name = models.CharField(max_length=100, help_text="What it is for, e.g. 'billing agent'.")
    project = models.CharField(
        max_length=128,
        help_text="The sessions' app name: sessions of this key are listed under it.",
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="ingest_keys",
        help_text="Whose sessions the spans become; the usual permissions apply to them.",
    )
    prefix = models.CharField(
        max_length=16, unique=True, editable=False, help_text="The key's first characters."
    )
    key_hash = models.CharField(max_length=64, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        editable=False,
    )
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        state = " (revoked)" if self.revoked_at else ""
        return f"{self.name} · {self.prefix}…{state}"

    @property
    def active(self) -> bool:
        return self.revoked_at is None


class PendingLog(models.Model):
    """An outside sender's log record of a span AgentDash has not stored ended yet (logs and
    spans travel apart, often logs first): it becomes an event of the span when the span's
    final version is stored, and is dropped after ``span_logs.PENDING_FOR`` without one."""

    key = models.ForeignKey(IngestKey, on_delete=models.CASCADE, related_name="pending_logs")
    trace_id = models.CharField(max_length=32)
    span_id = models.CharField(max_length=16)
    event = models.JSONField(help_text="The record as the span's event: {name, time, attributes}.")
    received_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["trace_id", "span_id"], name="pending_log_span")]

    def __str__(self) -> str:
        return f"{self.event.get('name', 'log')} of {self.trace_id}:{self.span_id}"
