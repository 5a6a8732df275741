"""The criteria an eval case is judged by, with ADK's names and default thresholds
(``AgentEvaluator``'s ``DEFAULT_CRITERIA``; a ``test_config.json`` ``{"criteria": {...}}``
overrides them there, :func:`criteria_from` here)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from runtime.evaluation.evaluator import Evaluator
from runtime.evaluation.response_evaluator import ResponseEvaluator
from runtime.evaluation.trajectory_evaluator import TrajectoryEvaluator

TOOL_TRAJECTORY_AVG_SCORE = "tool_trajectory_avg_score"
RESPONSE_MATCH_SCORE = "response_match_score"

DEFAULT_CRITERIA: Mapping[str, float] = {
    TOOL_TRAJECTORY_AVG_SCORE: 1.0,  # every tool call as expected
    RESPONSE_MATCH_SCORE: 0.8,  # ROUGE-1 F-measure
}
SUPPORTED_CRITERIA = tuple(DEFAULT_CRITERIA)


def criteria_from(data: Any) -> dict[str, float]:
    """Thresholds by criterion from ``data``: a mapping of criterion to threshold, or a
    ``test_config.json`` object (``{"criteria": {...}}``). Raises ``ValueError`` for an
    unknown criterion (ADK's LLM-judged ones need a network, and are not run here) or a
    threshold that is not a number in [0, 1]."""
    if isinstance(data, Mapping) and isinstance(data.get("criteria"), Mapping):
        data = data["criteria"]
    if not isinstance(data, Mapping) or not data:
        raise ValueError("criteria are an object of criterion names to thresholds")
    found: dict[str, float] = {}
    for name, threshold in data.items():
        if name not in SUPPORTED_CRITERIA:
            raise ValueError(
                f"criterion {str(name)[:80]!r} is not supported here; use "
                f"{' or '.join(SUPPORTED_CRITERIA)}"
            )
        if (
            isinstance(threshold, bool)
            or not isinstance(threshold, int | float)
            or not math.isfinite(threshold)
            or not 0 <= threshold <= 1
        ):
            raise ValueError(f"the threshold of {name} is a number from 0 to 1")
        found[name] = float(threshold)
    return found


def evaluator_for(name: str, threshold: float) -> Evaluator:
    """The evaluator of criterion ``name``; ``ValueError`` for one not supported."""
    if name == TOOL_TRAJECTORY_AVG_SCORE:
        return TrajectoryEvaluator(threshold)
    if name == RESPONSE_MATCH_SCORE:
        return ResponseEvaluator(threshold)
    raise ValueError(f"criterion {name!r} is not supported here")
