"""What operators change while agents run: callback switches and policies."""

from __future__ import annotations

from django.db import models

POLICY_TARGET = "controls.policy"
CALLBACK_SETTING_TARGET = "controls.callbacksetting"
"""Audit ``target_type`` of a policy and of a callback switch."""


class CallbackSetting(models.Model):
    """Switches one named callback of an agent on or off, for every session (``session``
    empty) or for one session. The most specific setting wins."""

    agent_name = models.CharField(max_length=128)
    callback_name = models.CharField(max_length=255)
    session = models.ForeignKey(
        "agent_sessions.AgentSession",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="callback_settings",
    )
    enabled = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["agent_name", "callback_name", "session"],
                name="callback_setting_scope_unique",
            ),
            models.UniqueConstraint(
                fields=["agent_name", "callback_name"],
                condition=models.Q(session__isnull=True),
                name="callback_setting_global_unique",
            ),
        ]

    @property
    def scope(self) -> str:
        return "global" if self.session_id is None else f"session {self.session_id}"

    def __str__(self) -> str:
        state = "on" if self.enabled else "off"
        return f"{self.agent_name}.{self.callback_name} {state} ({self.scope})"


class Policy(models.Model):
    """A named rule set of a known ``kind`` with a JSON ``config`` validated against that
    kind's schema; attached to the agents it governs."""

    name = models.CharField(max_length=128, unique=True)
    kind = models.CharField(max_length=64)
    config = models.JSONField(default=dict)
    agents = models.JSONField(default=list, blank=True, help_text="Names of the agents it governs.")
    enabled = models.BooleanField(default=True)
    version = models.PositiveIntegerField(default=1)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "policies"
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"


class RateWindow(models.Model):
    """Calls counted toward a rate limit (``runtime.guardrails.RateLimit``): one row per
    counted key (agent, user, tool; hashed) and fixed window, shared by every worker."""

    key = models.CharField(max_length=64)
    window_start = models.BigIntegerField(help_text="Unix time in seconds.")
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["key", "window_start"], name="rate_window_unique")
        ]

    def __str__(self) -> str:
        return f"{self.key[:12]}… @{self.window_start}: {self.count}"


class Breakpoint(models.Model):
    """Where an agent's runs pause for a person (``runtime.debug.breakpoints``): before a
    named tool, before every model call, or after a callback ends with an outcome — in every
    session of the agent (``session`` empty) or in one. Read at every step of a run."""

    class Kind(models.TextChoices):
        BEFORE_TOOL = "before_tool", "before a tool"
        BEFORE_MODEL = "before_model", "before every model call"
        CALLBACK_OUTCOME = "callback_outcome", "after a callback outcome"

    class Outcome(models.TextChoices):
        RAISED = "raised"
        OVERRIDDEN = "overridden"

    agent_name = models.CharField(max_length=128, help_text="The agent, or the root agent.")
    session = models.ForeignKey(
        "agent_sessions.AgentSession",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="breakpoints",
    )
    kind = models.CharField(max_length=32, choices=Kind.choices)
    tool_name = models.CharField(max_length=255, blank=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices, blank=True)
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["agent_name", "kind", "tool_name"]

    @property
    def scope(self) -> str:
        return "every session" if self.session_id is None else f"session {self.session_id}"

    @property
    def where(self) -> str:
        if self.kind == self.Kind.BEFORE_TOOL:
            return f"before tool {self.tool_name}"
        if self.kind == self.Kind.CALLBACK_OUTCOME:
            return f"after a callback {self.outcome}"
        return "before every model call"

    def __str__(self) -> str:
        return f"{self.agent_name}: {self.where} ({self.scope})"
