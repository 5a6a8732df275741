"""The agents this deployment runs, as loaded from Python at start-up."""

from __future__ import annotations

from django.db import models


class AgentRecord(models.Model):
    """A mirror of one root agent (and its tree) for the UI and admin: what it is, never how
    it runs; the Python object is the truth and is re-mirrored at every start."""

    name = models.CharField(max_length=128, unique=True, help_text="The root agent's name.")
    dotted_path = models.CharField(max_length=255)
    description = models.TextField(blank=True)
    model = models.CharField(max_length=128, blank=True)
    tools = models.JSONField(default=list, blank=True)
    callbacks = models.JSONField(
        default=list, blank=True, help_text="[{agent, slot, name}] for every callback in the tree."
    )
    sub_agents = models.JSONField(default=list, blank=True)
    loaded_at = models.DateTimeField(auto_now=True)
    available = models.BooleanField(
        default=True, help_text="False when it is no longer listed in settings."
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name
