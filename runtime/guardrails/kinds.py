"""Every kind of policy the runtime reads, in one table: each guardrail's, and the query
tool's (``runtime.safety.QueryPolicy``). A host that stores policies (AgentDash's ``controls``
app) builds its kinds from this table, so a stored policy is validated by the same config
model the runtime reads it with; a new guardrail class is added here once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from runtime.guardrails.input_screen import InputScreen
from runtime.guardrails.limits import RateLimit, StepLimits
from runtime.guardrails.llm_screen import LlmScreen
from runtime.guardrails.policy import Guardrail
from runtime.guardrails.redaction import OutputRedaction
from runtime.guardrails.tool_policy import ToolPolicy
from runtime.safety.query_policy import QueryPolicy

__all__ = ["GUARDRAILS", "PolicyKindSpec", "policy_kind_specs"]

GUARDRAILS: tuple[type[Guardrail[Any]], ...] = (
    InputScreen,
    ToolPolicy,
    OutputRedaction,
    StepLimits,
    RateLimit,
    LlmScreen,
)
"""Every guardrail class of the runtime (a test holds this to its subclasses)."""


@dataclass(frozen=True)
class PolicyKindSpec:
    """A policy kind: its name, the model its config validates with, what it governs, and a
    valid example."""

    name: str
    config: type[BaseModel]
    summary: str
    example: Mapping[str, Any]
    reader: str
    """The runtime class that reads it (``runtime.guardrails.RateLimit``)."""


def policy_kind_specs() -> list[PolicyKindSpec]:
    """The query tool's kind, then each guardrail's."""
    query = PolicyKindSpec(
        name="query",
        config=QueryPolicy,
        summary="What a query tool may run: the tables, SELECT only, a row cap.",
        example={"select_only": True, "tables": ["orders"], "max_rows": 100},
        reader="runtime.safety.QueryPolicy",
    )
    return [query] + [
        PolicyKindSpec(
            name=guard.kind,
            config=guard.Config,
            summary=guard.summary,
            example=guard.example,
            reader=f"{guard.__module__.rsplit('.', 1)[0]}.{guard.__name__}",
        )
        for guard in GUARDRAILS
    ]
