"""The versions of the instructions agents read while they run."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class InstructionVersion(models.Model):
    """One version of an agent's instruction (a template, filled from session state as ADK
    fills a string instruction). The newest version of an agent is the one it reads; a
    rollback is a new version with an older one's text (``rollback_of``), so the history only
    grows. Agents opt in in their code (``agent_instructions.stored_instruction``); until a
    first version is saved, the instruction written there applies (version ``code``)."""

    agent_name = models.CharField(max_length=128)
    version = models.PositiveIntegerField()
    text = models.TextField()
    reason = models.CharField(max_length=500, blank=True)
    rollback_of = models.PositiveIntegerField(
        null=True, blank=True, help_text="The version whose text this one restores (0: the code's)."
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )  # fmt: skip
    author_name = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["agent_name", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["agent_name", "version"], name="instruction_version_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.agent_name} v{self.version}"

    @property
    def label(self) -> str:
        """How spans and pages name it: ``v3``."""
        return f"v{self.version}"
