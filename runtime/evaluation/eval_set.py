"""ADK's eval set (``google.adk.evaluation.eval_set``): named, described eval cases."""

from __future__ import annotations

from runtime.evaluation.eval_case import EvalBaseModel, EvalCase


class EvalSet(EvalBaseModel):
    """A set of eval cases; ``eval_set_id`` names it (``<eval_set_id>.evalset.json``)."""

    eval_set_id: str
    name: str | None = None
    description: str | None = None
    eval_cases: list[EvalCase]
    creation_timestamp: float = 0.0
