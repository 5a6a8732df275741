"""A guardrail's decision on a span: the one place its ``agentdash.guardrail.*`` attributes
are written (by a guardrail callback on its own span, by the model step on a model span the
provider's safety filters withheld)."""

from __future__ import annotations

from opentelemetry.trace import Span

from runtime.telemetry.attributes import AgentDash, Decision
from runtime.telemetry.tracing import LiveSpan

REASON_CHARS = 2000


def decision_write(
    span: Span | LiveSpan, decision: str, reason: str, *, guardrail: str, policy: str = ""
) -> None:
    """Write ``decision`` (one of :class:`Decision`) by ``guardrail`` on ``span``, with its
    reason and the policy (``name@version``) it was made under, when there is one."""
    if decision not in Decision.ALL:
        raise ValueError(f"unknown decision {decision!r}; one of {', '.join(Decision.ALL)}")
    span.set_attribute(AgentDash.GUARDRAIL_NAME, guardrail)
    span.set_attribute(AgentDash.GUARDRAIL_DECISION, decision)
    span.set_attribute(AgentDash.GUARDRAIL_REASON, reason[:REASON_CHARS])
    if policy:
        span.set_attribute(AgentDash.GUARDRAIL_POLICY, policy)
