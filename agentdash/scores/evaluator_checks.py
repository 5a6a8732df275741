"""What online evaluators need that is no database's: each kind's config checked, the run's
material (its input, answer and tool calls), the verdicts of the checks that need no model
(ADK's tool trajectory and response match, a regular expression, a JSON schema), and the LLM
judge's prompt, answer schema and answer read. Django-free."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import jsonschema
from google.genai import types

from runtime.evaluation.eval_case import IntermediateData, Invocation
from runtime.evaluation.response_evaluator import ResponseEvaluator
from runtime.evaluation.session_conversion import events_to_invocations
from runtime.evaluation.trajectory_evaluator import TrajectoryEvaluator
from runtime.events import Event

RUBRIC_MAX_CHARS = 20_000
MATERIAL_MAX_CHARS = 20_000
"""The most of a run's input or answer an evaluator reads (a regular expression included)."""
TIMEOUT_DEFAULT_S = 60.0
DEFAULT_RUBRIC = (
    "You judge an AI agent's answer.\n\nThe user asked:\n<input>{input}</input>\n\n"
    "The agent called these tools:\n<trajectory>{trajectory}</trajectory>\n\n"
    "The agent answered:\n<output>{output}</output>\n\n"
    "Was the answer correct and helpful? Give your verdict as `value` and say why in one "
    "sentence as `explanation`."
)


@dataclass(frozen=True)
class Target:
    """The score an evaluator gives: its definition's kind and what values it takes."""

    kind: str
    minimum: float | None = None
    maximum: float | None = None
    categories: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Material:
    """What a run was asked, what it answered and which tools it called."""

    input: str
    output: str
    tool_calls: list[dict[str, Any]]


class EvaluatorError(Exception):
    """An evaluation that could not give a score (a judge that did not answer one, a check
    that cannot run): recorded on the evaluation; the run is never affected."""


def config_check(evaluator: str, config: Any, target: Target) -> dict[str, Any]:
    """The config as stored; ``ValueError`` saying what is wrong with it."""
    if not isinstance(config, dict):
        raise ValueError("the config is a JSON object")
    if evaluator == "llm_judge":
        rubric = config.get("rubric", DEFAULT_RUBRIC)
        if not isinstance(rubric, str) or not rubric.strip() or len(rubric) > RUBRIC_MAX_CHARS:
            raise ValueError(f"rubric: a text of 1 to {RUBRIC_MAX_CHARS:,} characters")
        model = config.get("model", "offline")
        if not isinstance(model, str) or not model.strip() or len(model) > 128:
            raise ValueError("model: a model name, such as offline or gemini-2.5-flash")
        timeout = config.get("timeout_s", TIMEOUT_DEFAULT_S)
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not (0 < timeout <= 600)
        ):
            raise ValueError("timeout_s: seconds, more than 0 and at most 600")
        return {"rubric": rubric, "model": model.strip(), "timeout_s": float(timeout)}
    if evaluator == "tool_trajectory":
        expected = config.get("expected_tools")
        if not isinstance(expected, list) or not all(_tool_ok(t) for t in expected):
            raise ValueError('expected_tools: a list of {"name": …, "args": {…}} (args optional)')
        _number_or_pass(target, "a tool trajectory")
        return {"expected_tools": expected, "threshold": _threshold(config)}
    if evaluator == "response_match":
        reference = config.get("reference")
        if not isinstance(reference, str) or not reference.strip():
            raise ValueError("reference: the answer expected, as text")
        _number_or_pass(target, "a response match")
        return {"reference": reference, "threshold": _threshold(config)}
    if evaluator == "regex":
        pattern = config.get("pattern")
        if not isinstance(pattern, str) or not pattern or len(pattern) > 1_000:
            raise ValueError("pattern: a regular expression of at most 1,000 characters")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"pattern: {exc}") from None
        must = config.get("must", "match")
        if must not in ("match", "not_match"):
            raise ValueError('must: "match" (the answer must match) or "not_match"')
        _yes_no(target, "a regular expression")
        return {"pattern": pattern, "must": must}
    if evaluator == "json_schema":
        schema = config.get("schema")
        if not isinstance(schema, dict):
            raise ValueError("schema: a JSON schema (an object)")
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise ValueError(f"schema: {exc.message}") from None
        _yes_no(target, "a JSON schema check")
        return {"schema": schema}
    raise ValueError(f"no evaluator named {evaluator!r}")


def _tool_ok(tool: Any) -> bool:
    return (isinstance(tool, dict) and isinstance(tool.get("name"), str)
            and isinstance(tool.get("args", {}), dict))  # fmt: skip


def _threshold(config: dict[str, Any]) -> float:
    value = config.get("threshold", 1.0)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValueError("threshold: a number from 0 to 1")
    return float(value)


def _number_or_pass(target: Target, what: str) -> None:
    if target.kind == "boolean":
        return
    if target.kind != "number" or not (
        target.minimum is not None and target.maximum is not None
        and target.minimum <= 0 and target.maximum >= 1
    ):  # fmt: skip
        raise ValueError(f"{what} scores from 0 to 1: give it a yes/no score, or a number "
                         "score whose range holds 0 to 1")  # fmt: skip


def _yes_no(target: Target, what: str) -> None:
    if target.kind != "boolean":
        raise ValueError(f"{what} passes or fails: give it a yes/no score")


# ── the run's material ─────────────────────────────────────────────────────────────────────
def material_of(events: Iterable[Event]) -> Material:
    """The run's first turn: the user's message, the final answer, the tool calls."""
    invocations = events_to_invocations(events)
    if not invocations:
        raise EvaluatorError("the run stored no turn to evaluate")
    turn = invocations[0]
    data = turn.intermediate_data
    calls = data.tool_uses if isinstance(data, IntermediateData) else []
    return Material(
        input=_text(turn.user_content)[:MATERIAL_MAX_CHARS],
        output=_text(turn.final_response)[:MATERIAL_MAX_CHARS],
        tool_calls=[{"name": c.name or "", "args": dict(c.args or {})} for c in calls],
    )


def _text(content: types.Content | None) -> str:
    if content is None:
        return ""
    return "".join(p.text or "" for p in content.parts or [] if not p.thought)


# ── checks without a model ─────────────────────────────────────────────────────────────────
def check_verdict(
    evaluator: str, config: dict[str, Any], material: Material, target: Target
) -> tuple[Any, str]:
    """The value to score (as the target takes it) and why."""
    if evaluator in ("tool_trajectory", "response_match"):
        score = _adk_score(evaluator, config, material)
        passed = score >= config["threshold"]
        why = f"{evaluator.replace('_', ' ')} {score:.2f} (threshold {config['threshold']:g})"
        return (passed if target.kind == "boolean" else round(score, 4)), why
    if evaluator == "regex":
        found = re.search(config["pattern"], material.output) is not None
        passed = found if config["must"] == "match" else not found
        return passed, f"the answer {'matches' if found else 'does not match'} the pattern"
    if evaluator == "json_schema":
        try:
            document = json.loads(material.output)
        except ValueError as exc:
            return False, f"the answer is not JSON: {exc}"
        errors = sorted(jsonschema.Draft202012Validator(config["schema"]).iter_errors(document),
                        key=lambda e: list(e.path))  # fmt: skip
        if errors:
            first = errors[0]
            where = "/".join(str(p) for p in first.path) or "(the document)"
            return False, f"{where}: {first.message}"[:500]
        return True, "the answer is valid against the schema"
    raise EvaluatorError(f"{evaluator} is not a check without a model")


def _adk_score(evaluator: str, config: dict[str, Any], material: Material) -> float:
    actual = _invocation(material.input, material.output, material.tool_calls)
    if evaluator == "tool_trajectory":
        expected = _invocation(material.input, "", config["expected_tools"])
        scorer: TrajectoryEvaluator | ResponseEvaluator = TrajectoryEvaluator(config["threshold"])
    else:
        expected = _invocation(material.input, config["reference"], [])
        scorer = ResponseEvaluator(config["threshold"])
    score = scorer.score_invocation(actual, expected)
    return score if math.isfinite(score) else 0.0


def _invocation(said: str, answer: str, calls: list[dict[str, Any]]) -> Invocation:
    return Invocation(
        user_content=types.Content(role="user", parts=[types.Part(text=said)]),
        final_response=types.Content(role="model", parts=[types.Part(text=answer)]),
        intermediate_data=IntermediateData(tool_uses=[
            types.FunctionCall(name=c["name"], args=c.get("args") or {}) for c in calls
        ]),
    )  # fmt: skip


# ── the LLM judge ──────────────────────────────────────────────────────────────────────────
def judge_prompt(rubric: str, material: Material) -> str:
    """The rubric with ``{input}``, ``{output}`` and ``{trajectory}`` filled (other braces
    stay as written)."""
    trajectory = json.dumps(material.tool_calls, ensure_ascii=False)[:MATERIAL_MAX_CHARS]
    fills = {"{input}": material.input, "{output}": material.output, "{trajectory}": trajectory}
    return re.sub(r"\{input\}|\{output\}|\{trajectory\}", lambda m: fills[m.group()], rubric)


def judge_schema(target: Target) -> types.Schema:
    """The answer asked of the judge: ``value`` as the score takes it, and ``explanation``."""
    if target.kind == "boolean":
        value = types.Schema(type=types.Type.BOOLEAN)
    elif target.kind == "number":
        value = types.Schema(type=types.Type.NUMBER, minimum=target.minimum, maximum=target.maximum)
    else:
        value = types.Schema(type=types.Type.STRING, enum=list(target.categories))
    return types.Schema(
        type=types.Type.OBJECT,
        properties={"value": value, "explanation": types.Schema(type=types.Type.STRING)},
        required=["value", "explanation"],
    )


def judge_answer(text: str) -> tuple[Any, str]:
    """The value and explanation the judge answered; ``EvaluatorError`` when its answer is
    not that JSON."""
    cleaned = text.strip().removeprefix("```json").removeprefix("```").removesuffix("```")
    try:
        found = json.loads(cleaned)
    except ValueError:
        raise EvaluatorError(f"the judge did not answer JSON: {text[:200]!r}") from None
    if not isinstance(found, dict) or "value" not in found:
        raise EvaluatorError(f"the judge's answer has no value: {text[:200]!r}")
    explanation = found.get("explanation")
    return found["value"], explanation[:2000] if isinstance(explanation, str) else ""
