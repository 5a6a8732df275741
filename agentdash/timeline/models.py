"""Spans of runs, and the per-session sequence of changes clients catch up from."""

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
        ]

    def __str__(self) -> str:
        return self.name


class SessionChange(models.Model):
    """The session's change log: every event (an operator's state edit is one), span version
    and run status change gets the next ``seq``; a reconnecting client asks for everything
    after the last it saw."""

    class Kind(models.TextChoices):
        EVENT = "event"
        SPAN = "span"
        RUN = "run"

    session = models.ForeignKey(
        "agent_sessions.AgentSession", on_delete=models.CASCADE, related_name="changes"
    )
    seq = models.PositiveBigIntegerField()
    kind = models.CharField(max_length=8, choices=Kind.choices)
    ref = models.CharField(max_length=128, help_text="Event id, trace:span id or run id.")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["session", "seq"], name="change_seq_unique")]
        ordering = ["session", "seq"]

    def __str__(self) -> str:
        return f"{self.session_id}@{self.seq} {self.kind}"


class SessionSeq(models.Model):
    """The last change seq given out in a session. A row apart from the session's own, so
    that taking seqs — for an event, a run's status, a batch of spans — waits only for another
    writer's seqs (held from its taking to its commit), never for the session's other updates.
    """

    session = models.OneToOneField(
        "agent_sessions.AgentSession",
        primary_key=True,
        on_delete=models.CASCADE,
        related_name="+",
    )
    last_seq = models.PositiveBigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.session_id}@{self.last_seq}"
