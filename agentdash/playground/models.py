"""The playground's own history: calls sent from a model span, never part of its session."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class PlaygroundRun(models.Model):
    """One call made in the playground from a model span (``trace_id``/``span_id`` of
    ``session``): what was sent (``request``: model, system, messages, tools, parameters —
    the GenAI conventions' shapes) and what came back (``answer``: the model's message,
    ``text`` its text), or the ``error``; tokens, cost and latency as measured here."""

    session = models.ForeignKey(
        "agent_sessions.AgentSession", on_delete=models.CASCADE, related_name="playground_runs"
    )
    trace_id = models.CharField(max_length=64)
    span_id = models.CharField(max_length=32)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                               on_delete=models.SET_NULL, related_name="+")  # fmt: skip
    author_name = models.CharField(max_length=150, blank=True)
    model = models.CharField(max_length=128)
    request = models.JSONField(default=dict)
    answer = models.JSONField(default=list, blank=True)
    text = models.TextField(blank=True)
    error = models.TextField(blank=True)
    input_tokens = models.PositiveIntegerField(null=True, blank=True)
    output_tokens = models.PositiveIntegerField(null=True, blank=True)
    cost_usd = models.FloatField(null=True, blank=True)
    latency_ms = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["session", "trace_id", "span_id", "-created_at"],
                                name="playground_of_span")]  # fmt: skip

    def __str__(self) -> str:
        return f"{self.model} on {self.span_id} ({self.created_at:%Y-%m-%d %H:%M})"
