"""Agents' processes that run elsewhere and take AgentDash's controls (the client in
``agentdash.client``): who they are, which agents, callbacks and tools they run, when they
were last heard from."""

from __future__ import annotations

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
