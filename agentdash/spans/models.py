"""The span store: every OpenTelemetry span of a session's runs, as last written."""

from __future__ import annotations

from django.db import models


class Span(models.Model):
    """One OpenTelemetry span. Written when it starts (``end_time`` null) and again when it
    ends; the final version replaces the start-time one (unique on trace and span id)."""

    class Status(models.TextChoices):
        UNSET = "unset"
        OK = "ok"
        ERROR = "error"

    trace_id = models.CharField(max_length=32)
    span_id = models.CharField(max_length=16)
    parent_span_id = models.CharField(max_length=16, blank=True)
    name = models.CharField(max_length=255)
    kind = models.CharField(max_length=16, default="internal")
    start_time = models.BigIntegerField(help_text="Unix time in nanoseconds.")
    end_time = models.BigIntegerField(null=True, blank=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.UNSET)
    status_message = models.TextField(blank=True)
    attributes = models.JSONField(default=dict, blank=True)
    events = models.JSONField(default=list, blank=True)
    session = models.ForeignKey(
        "agent_sessions.AgentSession",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="spans",
    )
    run = models.ForeignKey(
        "runs.Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="spans"
    )
    seq = models.PositiveBigIntegerField(
        default=0, help_text="The session change that last wrote this span."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["trace_id", "span_id"], name="span_identity")
        ]
        indexes = [
            models.Index(fields=["trace_id", "start_time"]),
            models.Index(fields=["session", "seq"]),
            models.Index(fields=["run"]),
            models.Index(fields=["session", "start_time", "id"], name="span_session_start"),
        ]

    def __str__(self) -> str:
        return self.name
