"""Reads of the guardrails' decisions: what each guardrail decided, counted and listed, for
one session or every session of an agent. From the span store's ``guardrail`` and
``decision`` columns (``agentdash.spans.decisions``); reasons from the span's attributes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, Q, QuerySet
from django.db.models.fields.json import KT

from agentdash.spans.models import Span
from runtime.telemetry.attributes import AgentDash, Decision, GenAI

LIST_DEFAULT = 100
LIST_MAX = 500
NOT_ALLOWED = [d for d in Decision.ALL if d != Decision.ALLOWED]


def session_decisions(*, session_id: str) -> QuerySet[Span]:
    """The spans of a session that carry a guardrail's decision."""
    return Span.objects.filter(session_id=session_id).exclude(decision="")


def agent_decisions(*, agent_name: str) -> QuerySet[Span]:
    """The spans carrying a decision in every session of the agent ``agent_name`` (the
    sessions' app: its sub-agents' decisions included)."""
    return Span.objects.filter(session__app_name=agent_name).exclude(decision="")


@dataclass
class GuardrailCount:
    """One guardrail's decisions, by decision."""

    guardrail: str
    by_decision: dict[str, int] = field(default_factory=dict)

    @property
    def cells(self) -> list[int]:
        """Counts in the order of ``Decision.ALL``."""
        return [self.by_decision.get(d, 0) for d in Decision.ALL]


def decision_counts(*, spans: QuerySet[Span]) -> list[GuardrailCount]:
    """Per guardrail (by name), how many of each decision."""
    found: dict[str, GuardrailCount] = {}
    rows = spans.values("guardrail", "decision").annotate(n=Count("id")).order_by()
    for row in rows:
        count = found.setdefault(row["guardrail"], GuardrailCount(guardrail=row["guardrail"]))
        count.by_decision[row["decision"]] = row["n"]
    return [found[name] for name in sorted(found)]


@dataclass(frozen=True)
class SessionCount:
    session_id: str
    title: str
    owner: str
    total: int
    stopped: int
    """Decisions other than ``allowed``."""


def decision_counts_by_session(*, agent_name: str, limit: int = 20) -> list[SessionCount]:
    """The agent's sessions with the most decisions that stopped something, then the most
    decisions; at most ``limit``."""
    rows = (
        agent_decisions(agent_name=agent_name)
        .values("session_id", "session__title", "session__user_id")
        .annotate(total=Count("id"), stopped=Count("id", filter=Q(decision__in=NOT_ALLOWED)))
        .order_by("-stopped", "-total", "session_id")[:limit]
    )
    return [
        SessionCount(
            session_id=row["session_id"],
            title=row["session__title"] or "",
            owner=str(row["session__user_id"] or ""),
            total=row["total"],
            stopped=row["stopped"],
        )
        for row in rows
    ]


@dataclass(frozen=True)
class DecisionRow:
    """One decision as the guardrails pages list it."""

    session_id: str
    trace_id: str
    span_id: str
    start_time: int
    guardrail: str
    decision: str
    reason: str
    policy: str
    agent: str
    hook: str
    span_name: str


def decisions_list(
    *,
    spans: QuerySet[Span],
    decision: str = "",
    guardrail: str = "",
    limit: int = LIST_DEFAULT,
) -> list[DecisionRow]:
    """The latest decisions first, narrowed to one ``decision`` (``"stopped"``: every one but
    ``allowed``) and one ``guardrail`` when given; at most ``limit`` (1..``LIST_MAX``)."""
    if not 1 <= limit <= LIST_MAX:
        raise ValueError(f"limit must be 1..{LIST_MAX}")
    if decision == "stopped":
        spans = spans.filter(decision__in=NOT_ALLOWED)
    elif decision:
        spans = spans.filter(decision=decision)
    if guardrail:
        spans = spans.filter(guardrail=guardrail)
    rows = (
        spans.order_by("-start_time", "-id")
        .annotate(
            a_reason=KT(f"attributes__{AgentDash.GUARDRAIL_REASON}"),
            a_policy=KT(f"attributes__{AgentDash.GUARDRAIL_POLICY}"),
            a_agent=KT(f"attributes__{GenAI.AGENT_NAME}"),
            a_hook=KT(f"attributes__{AgentDash.CALLBACK_HOOK}"),
        )
        .values_list(
            "session_id",
            "trace_id",
            "span_id",
            "start_time",
            "guardrail",
            "decision",
            "a_reason",
            "a_policy",
            "a_agent",
            "a_hook",
            "name",
        )[:limit]
    )
    return [
        DecisionRow(session_id, trace_id, span_id, start_time, *(_text(v) for v in texts))
        for session_id, trace_id, span_id, start_time, *texts in rows
    ]


def _text(value: Any) -> str:
    return "" if value is None else str(value)
