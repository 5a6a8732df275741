"""One eval case judged: the agent's invocations against the case's conversation, by each
criterion, as ADK's ``AgentEvaluator`` does (a case passes when every criterion's mean over
its invocations reaches the threshold)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from runtime.evaluation.eval_case import EvalCase, Invocation
from runtime.evaluation.eval_metrics import DEFAULT_CRITERIA, evaluator_for
from runtime.evaluation.evaluator import EvalStatus
from runtime.evaluation.response_evaluator import content_text, exact_match
from runtime.evaluation.trajectory_evaluator import tool_trajectory


@dataclass(frozen=True)
class TurnResult:
    """One expected invocation and what the agent did for it (``actual_*`` empty when the
    agent never got to it)."""

    user_text: str
    expected_tools: list[tuple[str, dict[str, Any]]]
    actual_tools: list[tuple[str, dict[str, Any]]] | None
    expected_response: str
    actual_response: str | None
    scores: dict[str, float]
    exact_match: bool

    def as_data(self) -> dict[str, Any]:
        return {
            "user": self.user_text,
            "expected_tools": [{"name": n, "args": a} for n, a in self.expected_tools],
            "actual_tools": None
            if self.actual_tools is None
            else [{"name": n, "args": a} for n, a in self.actual_tools],
            "expected_response": self.expected_response,
            "actual_response": self.actual_response,
            "scores": self.scores,
            "exact_match": self.exact_match,
        }


@dataclass(frozen=True)
class CaseResult:
    eval_id: str
    scores: dict[str, float]
    """Each criterion's mean over the invocations."""
    thresholds: dict[str, float]
    passed: bool
    exact_match: bool
    """Every final response exactly as expected."""
    turns: list[TurnResult] = field(default_factory=list)

    def failed_criteria(self) -> list[str]:
        return [n for n, s in self.scores.items() if s < self.thresholds[n]]


def evaluate_case(
    case: EvalCase,
    actual: list[Invocation],
    criteria: Mapping[str, float] = DEFAULT_CRITERIA,
) -> CaseResult:
    """Judge ``actual`` (the agent's invocations, in order) against ``case.conversation``.
    Raises ``ValueError`` for a case without a conversation (a scenario)."""
    if case.conversation is None:
        raise ValueError(
            f"eval case {case.eval_id!r} has a conversation scenario, not a conversation"
        )
    expected = case.conversation
    results = {
        name: evaluator_for(name, threshold).evaluate_invocations(actual, expected)
        for name, threshold in criteria.items()
    }
    turns = []
    for n, wanted in enumerate(expected):
        got = actual[n] if n < len(actual) else None
        turns.append(
            TurnResult(
                user_text=content_text(wanted.user_content),
                expected_tools=tool_trajectory(wanted.tool_calls()),
                actual_tools=None if got is None else tool_trajectory(got.tool_calls()),
                expected_response=content_text(wanted.final_response),
                actual_response=None if got is None else content_text(got.final_response),
                scores={
                    name: result.per_invocation_results[n].score or 0.0
                    for name, result in results.items()
                },
                exact_match=got is not None and exact_match(got, wanted),
            )
        )
    scores = {name: r.overall_score or 0.0 for name, r in results.items()}
    passed = all(r.overall_eval_status is EvalStatus.PASSED for r in results.values())
    if not expected:  # nothing to compare: a case of no turns proves nothing
        passed = False
    return CaseResult(
        eval_id=case.eval_id,
        scores=scores,
        thresholds=dict(criteria),
        passed=passed,
        exact_match=all(t.exact_match for t in turns) and bool(turns),
        turns=turns,
    )
