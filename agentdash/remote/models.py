"""Agents' processes that run elsewhere and take AgentDash's controls (the client in
``agentdash.client``): who they are, which agents, callbacks and tools they run, when they
were last heard from."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class RemoteProcess(models.Model):
    """One process of an app that connected with an ingest key: its agents belong to the
    key's project (the ``app_name`` of its sessions) and owner."""

    key = models.ForeignKey("ingest.IngestKey", on_delete=models.CASCADE, related_name="processes")
    token = models.CharField(max_length=64, unique=True, help_text="The process's own id.")
    host = models.CharField(max_length=255, blank=True)
    pid = models.PositiveIntegerField(null=True, blank=True)
    versions = models.JSONField(default=dict, blank=True, help_text="Library → version.")
    agents = models.JSONField(
        default=list,
        blank=True,
        help_text="What it registered: [{name, callbacks: [{slot, name}], tools: [name]}].",
    )
    root_agent = models.CharField(max_length=255, blank=True)
    cursors = models.JSONField(
        default=dict,
        blank=True,
        help_text="AgentDash session → the last operator edit (event seq) it was sent and "
        "applied, or that was there when it first named the session.",
    )
    connected_at = models.DateTimeField(auto_now_add=True)
    last_seen = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-last_seen"]

    def __str__(self) -> str:
        return f"{self.root_agent or '(no agent)'} on {self.host or '?'} (pid {self.pid})"


class RemotePause(models.Model):
    """A step of a remote app's agent paused for a person: at a breakpoint set in the
    dashboard, or at an ADK tool confirmation. The app's process asked (and waits, by its
    own rule); the answer is kept until the process that waits has taken it.

    The app names a pause (``pause_id``: the kind and the tool call's id), so a process that
    asks again — after AgentDash or the app restarted — finds the same pause, and its answer
    if one was given meanwhile."""

    class Kind(models.TextChoices):
        BREAKPOINT = "breakpoint"
        CONFIRMATION = "confirmation"

    class Status(models.TextChoices):
        WAITING = "waiting", "waits for an answer"
        ANSWERED = "answered", "answered, not yet taken by the app"
        TAKEN = "taken", "the app went on with the answer"
        ENDED = "ended", "the app ended it by its own rule"

    key = models.ForeignKey("ingest.IngestKey", on_delete=models.CASCADE, related_name="pauses")
    process = models.ForeignKey(
        RemoteProcess, null=True, blank=True, on_delete=models.SET_NULL, related_name="pauses"
    )
    session = models.ForeignKey(
        "agent_sessions.AgentSession", on_delete=models.CASCADE, related_name="remote_pauses"
    )
    app_session = models.CharField(max_length=200, help_text="The app's own session id.")
    pause_id = models.CharField(max_length=200, help_text="The app's name for the pause.")
    request_id = models.CharField(max_length=64, unique=True, help_text="The page's id.")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    agent = models.CharField(max_length=128, blank=True)
    tool = models.CharField(max_length=255, blank=True)
    call_id = models.CharField(max_length=200, blank=True)
    args = models.JSONField(default=dict, blank=True)
    hint = models.TextField(blank=True)
    payload = models.JSONField(null=True, blank=True)
    asked_at = models.DateTimeField()
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.WAITING, db_index=True
    )
    answer = models.JSONField(
        null=True, blank=True, help_text="{decision, payload, reason} as the app receives it."
    )
    answered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    answered_at = models.DateTimeField(null=True, blank=True)
    ended_why = models.CharField(max_length=255, blank=True)

    class Meta:
        ordering = ["asked_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["key", "app_session", "pause_id"], name="remote_pause_unique"
            )
        ]
        indexes = [
            models.Index(fields=["session", "status"], name="remote_pause_session"),
            models.Index(fields=["asked_at"], name="remote_pause_asked"),  # the Monitor's
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.tool or 'model call'} in {self.app_session} ({self.status})"
