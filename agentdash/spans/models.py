"""The span store: every OpenTelemetry span of a session's runs, as last written; who sent
the spans that came from outside (their resource and instrumentation scope); the prices its
model calls are costed at."""

from __future__ import annotations

from typing import TypedDict

from django.core.validators import MinValueValidator
from django.db import models


class SpanSource(models.Model):
    """The OTLP resource and instrumentation scope some spans were sent under, as sent (the
    ``Resource`` and ``InstrumentationScope`` of their ``ResourceSpans``/``ScopeSpans``): one
    row per distinct pair, found by ``digest``. The runtime's own spans have none."""

    digest = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the pair.")
    resource = models.JSONField(default=dict, blank=True, help_text="Resource attributes.")
    resource_schema_url = models.TextField(blank=True)
    resource_dropped = models.PositiveBigIntegerField(
        default=0, help_text="Resource attributes the sender dropped."
    )
    scope_name = models.TextField(blank=True)
    scope_version = models.TextField(blank=True)
    scope_attributes = models.JSONField(default=dict, blank=True)
    scope_schema_url = models.TextField(blank=True)
    scope_dropped = models.PositiveBigIntegerField(
        default=0, help_text="Scope attributes the sender dropped."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        service = self.resource.get("service.name") if isinstance(self.resource, dict) else None
        return f"{service or '(no service)'} · {self.scope_name or '(no scope)'}"


class Span(models.Model):
    """One OpenTelemetry span. Written when it starts (``end_time`` null) and again when it
    ends; the final version replaces the start-time one (unique on trace and span id)."""

    class Status(models.TextChoices):
        UNSET = "unset"
        OK = "ok"
        ERROR = "error"

    trace_id = models.CharField(max_length=32)
    span_id = models.CharField(max_length=16)
    parent_span_id = models.CharField(max_length=16, blank=True)
    name = models.CharField(max_length=255)
    kind = models.CharField(max_length=16, default="internal")
    start_time = models.BigIntegerField(help_text="Unix time in nanoseconds.")
    end_time = models.BigIntegerField(null=True, blank=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.UNSET)
    status_message = models.TextField(blank=True)
    attributes = models.JSONField(default=dict, blank=True)
    events = models.JSONField(default=list, blank=True)
    # What OTLP carries that the columns above do not, in OTLP/JSON's names, only when set:
    # ``flags``, ``traceState``, ``links`` (ids in hex, attributes as values),
    # ``droppedAttributesCount``, ``droppedEventsCount``, ``droppedLinksCount`` (the
    # sender's counts; what AgentDash itself cut is said in ``agentdash.ingest.*`` attributes).
    otlp = models.JSONField(default=dict, blank=True)
    source = models.ForeignKey(
        SpanSource,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="spans",
        db_index=False,
        help_text="Who sent the span from outside (none: the runtime's own).",
    )
    # No index of their own: the composite indexes below start with each (an index less to
    # write for every span stored).
    session = models.ForeignKey(
        "agent_sessions.AgentSession",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="spans",
        db_index=False,
    )
    run = models.ForeignKey(
        "runs.Run",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="spans",
        db_index=False,
    )
    seq = models.PositiveBigIntegerField(
        default=0, help_text="The session change that last wrote this span."
    )
    # A model call's usage, read out of its attributes by the store when the span is written
    # (agentdash.spans.usage): totals over a session's spans then add up columns of one small
    # index instead of parsing every span's JSON.
    usage_model = models.CharField(
        max_length=128, blank=True, help_text="The model that answered (else the one asked)."
    )
    tokens_in = models.BigIntegerField(null=True, blank=True)
    tokens_out = models.BigIntegerField(null=True, blank=True)
    tokens_cached = models.BigIntegerField(null=True, blank=True)
    tokens_thinking = models.BigIntegerField(null=True, blank=True)
    # A guardrail's decision, read out of its attributes by the store (agentdash.spans
    # .decisions): the guardrails view lists and counts them from one small index.
    guardrail = models.CharField(max_length=128, blank=True)
    decision = models.CharField(max_length=16, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["trace_id", "span_id"], name="span_identity")
        ]
        indexes = [
            models.Index(fields=["trace_id", "start_time"]),
            models.Index(fields=["session", "seq"]),
            # Only spans of a run (the runtime's): a span sent from outside has none, and no
            # read asks for spans without one — an index less to write for each of those.
            models.Index(fields=["run"], name="span_run", condition=models.Q(run__isnull=False)),
            models.Index(fields=["session", "start_time", "id"], name="span_session_start"),
            # Only model calls, and every column a total reads: the totals never touch the
            # table (measured in docs/BENCHMARKS.md).
            models.Index(
                fields=[
                    "session",
                    "run",
                    "usage_model",
                    "tokens_in",
                    "tokens_out",
                    "tokens_cached",
                    "tokens_thinking",
                ],
                name="span_usage",
                condition=models.Q(tokens_in__isnull=False) | models.Q(tokens_out__isnull=False),
            ),
            models.Index(
                fields=["session", "decision", "guardrail", "start_time"],
                name="span_decision",
                condition=~models.Q(decision=""),
            ),
            # The Monitor's decisions of a range, every session's (spans.step_reads).
            models.Index(
                fields=["start_time", "guardrail", "decision"],
                name="span_decision_time",
                condition=~models.Q(decision=""),
            ),
        ]

    def __str__(self) -> str:
        return self.name


ROLLUP_BINS = 72
"""Duration bins of a step rollup (``spans.rollups``: three per doubling from 1 ms)."""


class StepRollup(models.Model):
    """What the model and tool calls that started in one minute, hour or day (``period`` s,
    from ``bucket``, unix seconds) came to, per agent, source, step, name and outcome: how
    many, their durations' sum and how many fell in each duration bin (``b00`` … ``b71``),
    their tokens. The Monitor reads these instead of the spans (``spans.step_reads``). Kept
    by the span store in the transaction that stores each span's final version."""

    period = models.PositiveIntegerField()
    bucket = models.BigIntegerField(help_text="Unix seconds: the period's start.")
    kind = models.CharField(max_length=16, help_text="model or tool")
    name = models.CharField(max_length=255, help_text="The model's or the tool's.")
    agent = models.CharField(max_length=128, help_text="The session's agent (app).")
    external = models.BooleanField(help_text="Of a session ingested from elsewhere.")
    error = models.BooleanField()
    calls = models.BigIntegerField(default=0)
    seconds = models.FloatField(default=0.0, help_text="The durations' sum.")
    tokens_in = models.BigIntegerField(default=0)
    tokens_out = models.BigIntegerField(default=0)
    tokens_cached = models.BigIntegerField(default=0)
    tokens_thinking = models.BigIntegerField(default=0)
    for _bin in range(ROLLUP_BINS):
        locals()[f"b{_bin:02d}"] = models.IntegerField(default=0, db_default=0)
    del _bin

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["period", "bucket", "kind", "name", "agent", "external", "error"],
                name="step_rollup_key",
            )
        ]


MODEL_PRICE_TARGET = "spans.modelprice"
"""Audit ``target_type`` of a price row."""

NOT_NEGATIVE = MinValueValidator(0, message="A price cannot be negative.")


class PriceDigits(TypedDict):
    max_digits: int
    decimal_places: int
    validators: list[MinValueValidator]


PRICE_DIGITS: PriceDigits = {"max_digits": 12, "decimal_places": 6, "validators": [NOT_NEGATIVE]}


class ModelPrice(models.Model):
    """What a model's tokens cost, in US dollars per million tokens: a span's cost is read
    from the row of its model when the cost is shown, so an edited price applies to every
    span at once. A model without a row has tokens but no cost ("unknown")."""

    class Match(models.TextChoices):
        EXACT = "exact", "the exact name"
        PREFIX = "prefix", "every name that starts with it"

    model = models.CharField(
        max_length=128,
        unique=True,
        help_text='As the model reports it, e.g. "gemini-2.5-flash" (case does not matter; '
        'a leading "models/" is ignored).',
    )
    match = models.CharField(
        max_length=8,
        choices=Match.choices,
        default=Match.PREFIX,
        help_text="A prefix row prices every version of a model (gemini-2.5-flash-001); an "
        "exact row wins over any prefix, a longer prefix over a shorter one.",
    )
    input_per_mtok = models.DecimalField(
        "input, $ per 1M tokens",
        help_text="Every input token not read from a cache.",
        **PRICE_DIGITS,
    )
    output_per_mtok = models.DecimalField(
        "output, $ per 1M tokens",
        help_text="Every output token (thinking too, unless it has its own price).",
        **PRICE_DIGITS,
    )
    cached_input_per_mtok = models.DecimalField(
        "cached input, $ per 1M tokens",
        null=True,
        blank=True,
        help_text="Input tokens read from the provider's cache. Empty: priced as input.",
        **PRICE_DIGITS,
    )
    thinking_per_mtok = models.DecimalField(
        "thinking, $ per 1M tokens",
        null=True,
        blank=True,
        help_text="Output tokens spent thinking. Empty: priced as output.",
        **PRICE_DIGITS,
    )
    as_of = models.DateField(help_text="The day these figures were read from the source.")
    edited_on = models.DateField(
        null=True,
        blank=True,
        editable=False,
        help_text="The day an amount was last changed without a new date: the figures in use "
        "are of that day, not of the date above.",
    )
    source = models.CharField(
        max_length=500, help_text="Where the figures come from (a URL, an invoice, …)."
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["model"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(input_per_mtok__gte=0)
                & models.Q(output_per_mtok__gte=0)
                & (
                    models.Q(cached_input_per_mtok__isnull=True)
                    | models.Q(cached_input_per_mtok__gte=0)
                )
                & (models.Q(thinking_per_mtok__isnull=True) | models.Q(thinking_per_mtok__gte=0)),
                name="model_price_not_negative",
            ),
        ]

    def __str__(self) -> str:
        return self.model
