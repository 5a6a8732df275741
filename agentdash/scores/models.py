"""Score definitions (what may be said, and in which values) and the scores given."""

from __future__ import annotations

from django.conf import settings
from django.db import models

NAME_MAX = 64
COMMENT_MAX = 2000
CATEGORY_MAX = 64
CATEGORIES_MAX = 50


class ScoreDefinition(models.Model):
    """A kind of score: a yes/no, a number in a range, or one of a list of categories.
    Operators keep them (admin); a definition that is off takes no new scores and keeps its
    old ones. Its name and kind never change once it has scores (they would mean something
    else); its description, range and categories may grow."""

    class Kind(models.TextChoices):
        BOOLEAN = "boolean", "yes or no"
        NUMBER = "number", "a number in a range"
        CATEGORY = "category", "one of a list"

    name = models.SlugField(max_length=NAME_MAX, unique=True, help_text="e.g. correct, helpful")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    description = models.TextField(blank=True, max_length=2000)
    minimum = models.FloatField(null=True, blank=True, help_text="A number's least value.")
    maximum = models.FloatField(null=True, blank=True, help_text="A number's greatest value.")
    categories = models.JSONField(
        default=list, blank=True, help_text='The categories, e.g. ["wrong tool", "hallucination"].'
    )
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"


class Score(models.Model):
    """One score of a session, one of its runs or one of its spans, by one author from one
    source. The same author scoring the same thing again replaces their score."""

    class Target(models.TextChoices):
        SESSION = "session"
        RUN = "run"
        SPAN = "span"

    class Source(models.TextChoices):
        PERSON = "person", "a person, on the session page"
        END_USER = "end_user", "the chat's user, on an answer"
        EVALUATOR = "evaluator"
        API = "api"

    definition = models.ForeignKey(ScoreDefinition, on_delete=models.PROTECT, related_name="scores")
    session = models.ForeignKey(
        "agent_sessions.AgentSession", on_delete=models.CASCADE, related_name="scores"
    )
    target = models.CharField(max_length=8, choices=Target.choices)
    run = models.ForeignKey(
        "runs.Run", null=True, blank=True, on_delete=models.CASCADE, related_name="scores"
    )
    trace_id = models.CharField(max_length=32, blank=True)
    span_id = models.CharField(max_length=16, blank=True)
    value = models.FloatField(help_text="yes 1, no 0; the number; the category's place.")
    label = models.CharField(
        max_length=CATEGORY_MAX, blank=True, help_text="yes/no, or the category, as said."
    )
    comment = models.TextField(blank=True, max_length=COMMENT_MAX)
    source = models.CharField(max_length=16, choices=Source.choices)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )  # fmt: skip
    author_name = models.CharField(
        max_length=150, blank=True, help_text="Who, as said then (a person, an evaluator)."
    )
    key = models.CharField(
        max_length=255, help_text="What is scored and by whom: one score each (replaced)."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(fields=["definition", "session", "key"], name="score_once")
        ]
        indexes = [models.Index(fields=["session", "created_at"], name="score_session")]

    def __str__(self) -> str:
        return f"{self.definition.name}={self.label or self.value} on {self.target}"
