"""Scores as ADK computes them: tool trajectory exact match, ROUGE-1 response match."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types

from runtime.evaluation import (
    DEFAULT_CRITERIA,
    RESPONSE_MATCH_SCORE,
    TOOL_TRAJECTORY_AVG_SCORE,
    EvalCase,
    EvalStatus,
    IntermediateData,
    Invocation,
    ResponseEvaluator,
    TrajectoryEvaluator,
    criteria_from,
    evaluate_case,
    rouge_1,
)


def turn(text: str, answer: str | None, *calls: tuple[str, dict[str, Any]]) -> Invocation:
    return Invocation(
        user_content=types.Content(role="user", parts=[types.Part(text=text)]),
        final_response=None
        if answer is None
        else types.Content(role="model", parts=[types.Part(text=answer)]),
        intermediate_data=IntermediateData(
            tool_uses=[types.FunctionCall(name=n, args=a, id=f"id-{n}") for n, a in calls]
        ),
    )


def test_rouge_1_counts_shared_words() -> None:
    score = rouge_1("the cat sat", "the cat sat on the mat")
    assert (score.precision, score.recall) == (1.0, 0.5)
    assert score.fmeasure == pytest.approx(2 / 3)


def test_rouge_1_ignores_case_and_punctuation_and_counts_repeats_once_each() -> None:
    assert rouge_1("Paris!", "paris").fmeasure == 1.0
    # "the" twice in the candidate, once in the reference: one match.
    score = rouge_1("the the", "the end")
    assert (score.precision, score.recall) == (0.5, 0.5)


def test_rouge_1_of_nothing_shared_and_of_empty_texts() -> None:
    assert rouge_1("yes", "no").fmeasure == 0.0
    assert rouge_1("", "something").fmeasure == 0.0
    assert rouge_1("", "").fmeasure == 1.0  # nothing expected, nothing said
    assert rouge_1("東京 です", "東京 です").fmeasure == 1.0  # letters beyond ASCII count


def test_the_adk_docs_example_scores_about_what_adk_says() -> None:
    # Without stemming: "turned"/"set" differ; the overlap is device_2, status/off words.
    got = rouge_1(
        "I have set the device_2 status to off.", "I have set the device_2 status to off."
    )
    assert got.fmeasure == 1.0


def test_trajectory_is_an_exact_match_of_names_and_arguments_in_order() -> None:
    judge = TrajectoryEvaluator(threshold=1.0)
    expected = turn("q", "a", ("t", {"x": 1}), ("u", {}))
    assert judge.score_invocation(turn("q", "b", ("t", {"x": 1}), ("u", {})), expected) == 1.0
    assert judge.score_invocation(turn("q", "a", ("u", {}), ("t", {"x": 1})), expected) == 0.0
    assert judge.score_invocation(turn("q", "a", ("t", {"x": 2}), ("u", {})), expected) == 0.0
    assert judge.score_invocation(turn("q", "a", ("t", {"x": 1})), expected) == 0.0
    # Call ids differ from run to run and are not compared; absent args equal {}.
    no_args = Invocation(
        user_content=types.Content(parts=[types.Part(text="q")]),
        intermediate_data=IntermediateData(tool_uses=[types.FunctionCall(name="u")]),
    )
    assert judge.score_invocation(no_args, turn("q", "a", ("u", {}))) == 1.0


def test_the_overall_score_is_the_mean_and_a_missing_turn_scores_zero() -> None:
    expected = [turn("1", "a", ("t", {})), turn("2", "b", ("t", {}))]
    result = TrajectoryEvaluator(1.0).evaluate_invocations([turn("1", "a", ("t", {}))], expected)
    assert result.overall_score == 0.5
    assert result.overall_eval_status is EvalStatus.FAILED
    assert [r.score for r in result.per_invocation_results] == [1.0, 0.0]
    responses = ResponseEvaluator(0.8).evaluate_invocations(expected, expected)
    assert (responses.overall_score, responses.overall_eval_status) == (1.0, EvalStatus.PASSED)


def test_a_case_passes_when_every_criterion_reaches_its_threshold() -> None:
    case = EvalCase(
        eval_id="c",
        conversation=[
            turn("capital of France?", "The capital of France is Paris.", ("cap", {"c": "France"}))
        ],
    )
    same = [turn("capital of France?", "The capital of France is Paris.", ("cap", {"c": "France"}))]
    close = [
        turn(
            "capital of France?",
            "The capital of France is Paris, I think.",
            ("cap", {"c": "France"}),
        )
    ]
    other_tool = [
        turn("capital of France?", "The capital of France is Paris.", ("cap", {"c": "Spain"}))
    ]

    ok = evaluate_case(case, same)
    assert (
        ok.passed
        and ok.exact_match
        and ok.scores
        == {
            TOOL_TRAJECTORY_AVG_SCORE: 1.0,
            RESPONSE_MATCH_SCORE: 1.0,
        }
    )
    near = evaluate_case(case, close)
    assert near.passed and not near.exact_match
    assert 0.8 <= near.scores[RESPONSE_MATCH_SCORE] < 1.0
    wrong = evaluate_case(case, other_tool)
    assert not wrong.passed and wrong.failed_criteria() == [TOOL_TRAJECTORY_AVG_SCORE]
    assert wrong.turns[0].actual_tools == [("cap", {"c": "Spain"})]
    silent = evaluate_case(case, [])
    assert not silent.passed and silent.turns[0].actual_response is None
    lenient = evaluate_case(case, close, {RESPONSE_MATCH_SCORE: 0.99})
    assert not lenient.passed and set(lenient.scores) == {RESPONSE_MATCH_SCORE}


def test_criteria_default_to_adks_and_are_checked() -> None:
    assert DEFAULT_CRITERIA == {TOOL_TRAJECTORY_AVG_SCORE: 1.0, RESPONSE_MATCH_SCORE: 0.8}
    assert criteria_from({"criteria": {RESPONSE_MATCH_SCORE: 0.5}}) == {RESPONSE_MATCH_SCORE: 0.5}
    for bad in ({"safety_v1": 0.5}, {RESPONSE_MATCH_SCORE: 2}, {RESPONSE_MATCH_SCORE: "x"}, {}):
        with pytest.raises(ValueError):
            criteria_from(bad)
