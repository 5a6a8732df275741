"""Tool trajectory match, ADK's ``tool_trajectory_avg_score`` (``TrajectoryEvaluator``): an
invocation scores 1.0 when the agent called exactly the expected tools with exactly the
expected arguments in the expected order, else 0.0. Call ids are not compared (each run
makes new ones); absent arguments equal ``{}``."""

from __future__ import annotations

from typing import Any

from google.genai import types

from runtime.evaluation.eval_case import Invocation
from runtime.evaluation.evaluator import Evaluator


def tool_trajectory(calls: list[types.FunctionCall]) -> list[tuple[str, dict[str, Any]]]:
    """The calls as ``(name, args)`` pairs: what the match compares."""
    return [(call.name or "", dict(call.args or {})) for call in calls]


def tool_calls_equal(actual: list[types.FunctionCall], expected: list[types.FunctionCall]) -> bool:
    return tool_trajectory(actual) == tool_trajectory(expected)


class TrajectoryEvaluator(Evaluator):
    """Exact match of the tool trajectory per invocation (1.0 or 0.0)."""

    def score_invocation(self, actual: Invocation, expected: Invocation) -> float:
        return 1.0 if tool_calls_equal(actual.tool_calls(), expected.tool_calls()) else 0.0
