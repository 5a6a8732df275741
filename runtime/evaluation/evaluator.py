"""What an evaluator returns, as in ADK (``google.adk.evaluation.evaluator``): a score per
invocation and overall, each passed or failed against the metric's threshold."""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from runtime.evaluation.eval_case import Invocation


class EvalStatus(enum.Enum):
    PASSED = 1
    FAILED = 2
    NOT_EVALUATED = 3


@dataclass(frozen=True)
class PerInvocationResult:
    actual_invocation: Invocation | None
    expected_invocation: Invocation
    score: float | None = None
    eval_status: EvalStatus = EvalStatus.NOT_EVALUATED


@dataclass(frozen=True)
class EvaluationResult:
    overall_score: float | None = None
    overall_eval_status: EvalStatus = EvalStatus.NOT_EVALUATED
    per_invocation_results: list[PerInvocationResult] = field(default_factory=list)


class Evaluator(ABC):
    """Scores the agent's actual invocations against the expected ones, pairwise in order.

    An expected invocation with no actual one (the agent's run stopped early) scores 0; the
    overall score is the mean over the expected invocations and passes when it is at least
    the threshold."""

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold

    @abstractmethod
    def score_invocation(self, actual: Invocation, expected: Invocation) -> float:
        """The score of one pair, in [0, 1]."""

    def status(self, score: float) -> EvalStatus:
        return EvalStatus.PASSED if score >= self.threshold else EvalStatus.FAILED

    def evaluate_invocations(
        self, actual_invocations: list[Invocation], expected_invocations: list[Invocation]
    ) -> EvaluationResult:
        results = []
        for n, expected in enumerate(expected_invocations):
            actual = actual_invocations[n] if n < len(actual_invocations) else None
            score = 0.0 if actual is None else self.score_invocation(actual, expected)
            results.append(PerInvocationResult(actual, expected, score, self.status(score)))
        if not results:
            return EvaluationResult()
        overall = sum(r.score or 0.0 for r in results) / len(results)
        return EvaluationResult(overall, self.status(overall), results)
