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


class EvaluatorRule(models.Model):
    """An online evaluator: which finished runs it takes (an agent, an outcome, a sampled
    share), how it judges them (``evaluator`` and its ``config``) and the score it gives
    (``definition``). Run in the workers after each run, never touching the run
    (docs/SCORES.md, "Online evaluators")."""

    class Evaluator(models.TextChoices):
        LLM_JUDGE = "llm_judge", "LLM judge (a rubric, a model)"
        TOOL_TRAJECTORY = "tool_trajectory", "Tool trajectory (ADK: the expected tool calls)"
        RESPONSE_MATCH = "response_match", "Response match (ADK: ROUGE-1 against a reference)"
        REGEX = "regex", "Regular expression on the answer"
        JSON_SCHEMA = "json_schema", "JSON schema of the answer"

    class Outcome(models.TextChoices):
        ANY = "", "any finished run"
        SUCCEEDED = "succeeded", "succeeded"
        FAILED = "failed", "failed"

    name = models.SlugField(max_length=64, unique=True)
    enabled = models.BooleanField(default=True)
    agent_name = models.CharField(
        max_length=128, blank=True, help_text="The root agent whose runs it takes (empty: any)."
    )
    outcome = models.CharField(max_length=16, choices=Outcome.choices, blank=True, default="")
    sample_rate = models.FloatField(
        default=1.0, help_text="The share of matching runs evaluated, from 0 to 1."
    )
    evaluator = models.CharField(max_length=32, choices=Evaluator.choices)
    config = models.JSONField(default=dict, blank=True)
    definition = models.ForeignKey(
        ScoreDefinition, on_delete=models.PROTECT, related_name="rules",
        help_text="The score it gives.",
    )  # fmt: skip
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Evaluation(models.Model):
    """One rule's evaluation of one run: its outcome (a score, or why there is none) and, for
    an LLM judge, what the judge cost — kept apart from the agent's, with the judge's own
    session (its spans and events)."""

    class Status(models.TextChoices):
        RUNNING = "running"
        SCORED = "scored"
        FAILED = "failed"

    rule = models.ForeignKey(EvaluatorRule, on_delete=models.CASCADE, related_name="evaluations")
    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="evaluations")
    session = models.ForeignKey(
        "agent_sessions.AgentSession", on_delete=models.CASCADE, related_name="evaluations"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    score = models.ForeignKey(Score, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")  # fmt: skip
    explanation = models.TextField(blank=True)
    error = models.TextField(blank=True)
    judge_session_id = models.CharField(max_length=64, blank=True)
    judge_model = models.CharField(max_length=128, blank=True)
    input_tokens = models.PositiveIntegerField(null=True, blank=True)
    output_tokens = models.PositiveIntegerField(null=True, blank=True)
    cost_usd = models.FloatField(null=True, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["rule", "run"], name="evaluation_once_per_rule_run")
        ]

    def __str__(self) -> str:
        return f"{self.rule_id} on run {self.run_id}: {self.status}"


class AnnotationQueue(models.Model):
    """Runs for people to review, one by one: filled from a filter or by hand, each item
    scored with the queue's ``definitions`` (docs/SCORES.md, "Annotation queues")."""

    name = models.SlugField(max_length=64, unique=True)
    description = models.CharField(max_length=500, blank=True)
    definitions = models.ManyToManyField(ScoreDefinition, related_name="queues")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")  # fmt: skip
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class QueueItem(models.Model):
    """One run in a queue: who has it (``assigned_to``, given when a reviewer opens it, and
    since when: ``assigned_at`` — held that long unfinished, it goes to the next reviewer),
    and who reviewed (or skipped) it when."""

    class Status(models.TextChoices):
        PENDING = "pending"
        DONE = "done"
        SKIPPED = "skipped"

    queue = models.ForeignKey(AnnotationQueue, on_delete=models.CASCADE, related_name="items")
    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="queue_items")
    session = models.ForeignKey("agent_sessions.AgentSession", on_delete=models.CASCADE,
                                related_name="queue_items")  # fmt: skip
    position = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    assigned_to = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                    on_delete=models.SET_NULL, related_name="+")  # fmt: skip
    assigned_at = models.DateTimeField(null=True, blank=True)
    done_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                on_delete=models.SET_NULL, related_name="+")  # fmt: skip
    done_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["queue", "position"]
        constraints = [models.UniqueConstraint(fields=["queue", "run"], name="queue_run_once")]
        indexes = [models.Index(fields=["queue", "status", "position"], name="queue_next")]

    def __str__(self) -> str:
        return f"{self.queue_id} #{self.position}: run {self.run_id} ({self.status})"
