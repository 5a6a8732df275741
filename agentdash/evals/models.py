"""Eval sets (ADK's ``EvalSet``, stored whole), their runs, and each case's result."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class EvalSetRecord(models.Model):
    """One ADK eval set. ``data`` is the set as ``adk`` writes it (``runtime.evaluation``);
    the other columns repeat what lists show."""

    eval_set_id = models.CharField(max_length=128, unique=True)
    name = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)
    agent_name = models.CharField(
        max_length=128, blank=True, help_text="The agent its cases run against by default."
    )
    case_count = models.PositiveIntegerField(default=0)
    data = models.JSONField(help_text="The eval set in ADK's JSON form.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-id"]
        verbose_name = "eval set"

    def __str__(self) -> str:
        return self.eval_set_id


class EvalRun(models.Model):
    """An eval set run once against an agent: one new session per case."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        PASSED = "passed"
        FAILED = "failed"
        """At least one case failed or could not run."""
        ERROR = "error"
        """The run itself stopped (the agent is gone, the process stopped): see ``error``."""

    eval_set = models.ForeignKey(EvalSetRecord, on_delete=models.CASCADE, related_name="runs")
    agent_name = models.CharField(max_length=128)
    criteria = models.JSONField(help_text="Threshold by criterion.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="Written while it runs; stale: its process stopped."
    )
    attempt = models.PositiveSmallIntegerField(default=1)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.eval_set} on {self.agent_name} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.PASSED, self.Status.FAILED, self.Status.ERROR)


class EvalCaseResult(models.Model):
    """One case of a run: its session, scores and verdict; ``details`` per turn."""

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        PASSED = "passed"
        FAILED = "failed"
        ERROR = "error"
        """It could not run (see ``error``)."""

    eval_run = models.ForeignKey(EvalRun, on_delete=models.CASCADE, related_name="cases")
    position = models.PositiveIntegerField()
    eval_id = models.CharField(max_length=200)
    session = models.ForeignKey(
        "agent_sessions.AgentSession",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    tool_trajectory_score = models.FloatField(null=True, blank=True)
    response_match_score = models.FloatField(null=True, blank=True)
    exact_match = models.BooleanField(default=False)
    details = models.JSONField(default=list, blank=True, help_text="Per turn: expected, actual.")
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["eval_run", "position"]
        constraints = [
            models.UniqueConstraint(fields=["eval_run", "position"], name="eval_case_position")
        ]

    def __str__(self) -> str:
        return f"{self.eval_id} ({self.status})"
