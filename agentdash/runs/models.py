"""Runs: one agent invocation each, from queued to an outcome."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Run(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        WAITING = "waiting"
        """Ended on a tool confirmation nobody has answered yet (runs.confirmations)."""
        SUCCEEDED = "succeeded"
        FAILED = "failed"
        CANCELLED = "cancelled"

    session = models.ForeignKey(
        "agent_sessions.AgentSession", on_delete=models.CASCADE, related_name="runs"
    )
    agent_name = models.CharField(max_length=128)
    invocation_id = models.CharField(max_length=64, unique=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    message = models.JSONField(help_text="The user's message (google.genai Content).")
    message_stored = models.BooleanField(
        default=False,
        help_text="The message is in the session already (a fork at a question): the run "
        "answers it without appending it again.",
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    attempt = models.PositiveSmallIntegerField(default=0)
    worker = models.CharField(max_length=128, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    queued_at = models.DateTimeField(
        null=True, blank=True, help_text="When the run was last handed to the executor."
    )
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    trace_id = models.CharField(max_length=32, blank=True)
    error = models.TextField(blank=True)
    cancel_requested = models.BooleanField(default=False)
    cancel_reason = models.TextField(blank=True)
    change_seq = models.PositiveBigIntegerField(
        null=True,
        blank=True,
        editable=False,
        help_text="The seq of the run's latest change in its session's change log: the one "
        "that tells its data as it is now (none: recorded before this was kept).",
    )
    client_id = models.CharField(
        max_length=128,
        blank=True,
        default="",
        help_text="The id the client gave the message (a chat.send's client_id): the same "
        "message sent again, after its answer was lost, finds this run instead of queuing "
        "another. Empty: none given.",
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["session", "client_id"],
                condition=~models.Q(client_id=""),
                name="run_session_client_id",
            ),
        ]
        indexes = [
            models.Index(fields=["status", "heartbeat_at"]),
            models.Index(fields=["session", "-created_at"]),
            # The Monitor's runs of a range: the range read from this index alone.
            models.Index(
                fields=["created_at", "status", "started_at", "finished_at", "session"],
                name="run_created_measures",
            ),
        ]
        permissions = [("cancel_run", "Can cancel a run")]

    def __str__(self) -> str:
        return f"{self.agent_name} {self.invocation_id} ({self.status})"


class ProcessHealth(models.Model):
    """One process that runs a run host (a daphne server, a Celery worker), as it last
    described itself: written every ``HEALTH_INTERVAL_S`` by the process itself
    (:mod:`agentdash.runs.health`), read by ``manage.py health`` and ``/health/``."""

    name = models.CharField(max_length=128, unique=True, help_text="host:pid")
    runs_agents = models.BooleanField(default=False)
    started_at = models.DateTimeField()
    beat_at = models.DateTimeField(db_index=True)
    beat_every_s = models.FloatField(help_text="How often this process writes its row.")
    stopped_at = models.DateTimeField(null=True, blank=True)
    services = models.JSONField(
        default=dict, help_text="Per service: state, restarts, last_error, since."
    )

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "process health"

    def __str__(self) -> str:
        return self.name


class Replay(models.Model):
    """The user messages of a fork's parent that followed the fork point, run again on the
    fork one after another (:mod:`agentdash.runs.replays`): the next is queued when the
    session's runs have all ended and the last one queued here succeeded."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        DONE = "done"
        STOPPED = "stopped"
        """A run of it failed or was cancelled, or the next could not be queued."""

    session = models.ForeignKey(
        "agent_sessions.AgentSession", on_delete=models.CASCADE, related_name="replays"
    )
    agent_name = models.CharField(max_length=128)
    messages = models.JSONField(help_text="The messages to run, in order (google.genai Content).")
    queued = models.PositiveIntegerField(default=0, help_text="How many have been queued.")
    run_ids = models.JSONField(default=list, blank=True, help_text="Their runs, in order.")
    current_run = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    error = models.TextField(blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["session", "status"])]

    def __str__(self) -> str:
        return f"replay of {len(self.messages)} on {self.session_id} ({self.status})"


class Wait(models.Model):
    """A run's wait for a person: one tool confirmation (or breakpoint) its invocation asked
    for, from the moment the run stopped to wait until it was answered — what the Monitor
    counts of confirmations and how long runs waited (``runs.waits``). The request itself
    stays in the session's events; this row keeps the times and the answer."""

    class Kind(models.TextChoices):
        CONFIRMATION = "confirmation"
        BREAKPOINT = "breakpoint"

    class Outcome(models.TextChoices):
        WAITING = "", "waiting"
        APPROVE = "approve"
        DENY = "deny"
        STEP = "step", "step (a breakpoint: go on, pause again)"
        CANCEL = "cancel", "cancel (a breakpoint: end there)"
        EXPIRED = "expired", "denied: no answer in time"
        ABANDONED = "abandoned", "the run was stopped while it waited"

    session = models.ForeignKey(
        "agent_sessions.AgentSession", on_delete=models.CASCADE, related_name="waits"
    )
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="waits")
    request_id = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    tool = models.CharField(max_length=255, blank=True)
    asked_at = models.DateTimeField(help_text="When the run stopped to wait.")
    answered_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["session", "request_id"], name="wait_unique")
        ]
        indexes = [models.Index(fields=["asked_at", "session"], name="wait_asked")]

    def __str__(self) -> str:
        return f"{self.kind} {self.tool} ({self.get_outcome_display()})"
