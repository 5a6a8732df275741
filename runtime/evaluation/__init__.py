"""Evaluation, ADK's way (``google.adk.evaluation``): eval sets and cases in ADK's JSON
format, a session's events turned into a case, and the two criteria that need no network —
tool trajectory match and ROUGE-1 response match (docs/EVAL.md)."""

from runtime.evaluation.case_evaluator import CaseResult, TurnResult, evaluate_case
from runtime.evaluation.eval_case import (
    EvalCase,
    IntermediateData,
    Invocation,
    InvocationEvent,
    InvocationEvents,
    SessionInput,
)
from runtime.evaluation.eval_metrics import (
    DEFAULT_CRITERIA,
    RESPONSE_MATCH_SCORE,
    SUPPORTED_CRITERIA,
    TOOL_TRAJECTORY_AVG_SCORE,
    criteria_from,
    evaluator_for,
)
from runtime.evaluation.eval_set import EvalSet
from runtime.evaluation.eval_set_files import (
    EVAL_SET_SUFFIX,
    EvalSetFormatError,
    eval_set_data,
    eval_set_dump,
    eval_set_load,
    eval_set_loads,
)
from runtime.evaluation.evaluator import (
    EvalStatus,
    EvaluationResult,
    Evaluator,
    PerInvocationResult,
)
from runtime.evaluation.response_evaluator import (
    ResponseEvaluator,
    RougeScore,
    content_text,
    exact_match,
    rouge_1,
)
from runtime.evaluation.session_conversion import eval_case_from_events, events_to_invocations
from runtime.evaluation.trajectory_evaluator import TrajectoryEvaluator, tool_calls_equal

__all__ = [
    "DEFAULT_CRITERIA",
    "EVAL_SET_SUFFIX",
    "RESPONSE_MATCH_SCORE",
    "SUPPORTED_CRITERIA",
    "TOOL_TRAJECTORY_AVG_SCORE",
    "CaseResult",
    "EvalCase",
    "EvalSet",
    "EvalSetFormatError",
    "EvalStatus",
    "EvaluationResult",
    "Evaluator",
    "IntermediateData",
    "Invocation",
    "InvocationEvent",
    "InvocationEvents",
    "PerInvocationResult",
    "ResponseEvaluator",
    "RougeScore",
    "SessionInput",
    "TrajectoryEvaluator",
    "TurnResult",
    "content_text",
    "criteria_from",
    "eval_case_from_events",
    "eval_set_data",
    "eval_set_dump",
    "eval_set_load",
    "eval_set_loads",
    "evaluate_case",
    "evaluator_for",
    "events_to_invocations",
    "exact_match",
    "rouge_1",
    "tool_calls_equal",
]
