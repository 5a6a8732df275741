"""Online evaluators (docs/SCORES.md) on real runs of the inline executor: after a run ends,
the rules that take it score it in the worker — an LLM judge (the offline model, in a
session of its own whose tokens and cost are the judge's, not the agent's), ADK's tool
trajectory and response match, a regular expression, a JSON schema —; a rule samples, filters
by agent and outcome, evaluates a run once; a judge that raises or times out is recorded as a
failed evaluation and the run is as it ended."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from datetime import date
from decimal import Decimal
from typing import Any, ClassVar

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from google.genai import types

from agentdash.agent_sessions.models import AgentSession
from agentdash.runs.models import Run
from agentdash.runs.services import arun_enqueue
from agentdash.scores.models import Evaluation, EvaluatorRule, Score, ScoreDefinition
from agentdash.scores.online import sampled
from agentdash.scores.rules import evaluator_rule_save
from agentdash.scores.services import definition_save
from agentdash.spans.prices import model_price_set
from agentdash.spans.totals import sessions_usage
from runtime import LlmAgent, ScriptedLlm
from runtime.models import registry
from runtime.models.base_llm import BaseLlm
from runtime.models.llm_request import LlmRequest
from runtime.models.llm_response import LlmResponse
from tests.agentdash.runs.conftest import run_ended, says, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

MakeSession = Callable[[str], AgentSession]
CALL = types.FunctionCall(name="get_capital_city", args={"country": "France"})


def get_capital_city(country: str) -> dict[str, str]:
    """The capital of a country."""
    return {"result": "Paris" if country == "France" else "unknown"}


class SlowJudge(BaseLlm):
    """A model that takes its time (a judge past its timeout)."""

    model: str = "slow-judge"
    provider: ClassVar[str] = "test"

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"slow-judge"]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        await asyncio.sleep(30)
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="{}")]))


class BrokenJudge(BaseLlm):
    model: str = "broken-judge"
    provider: ClassVar[str] = "test"

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"broken-judge"]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        raise RuntimeError("the judge's provider is down")
        yield  # pragma: no cover


registry.register(SlowJudge)
registry.register(BrokenJudge)


def rules(operator: User, *made: tuple[str, str, str, dict[str, Any]], **extra: Any) -> None:
    helpful = definition_save(definition=ScoreDefinition(name="helpful", kind="boolean"),
                              actor=operator)  # fmt: skip
    match = definition_save(definition=ScoreDefinition(name="match", kind="number", minimum=0,
                                                       maximum=1), actor=operator)  # fmt: skip
    for name, evaluator, definition, config in made:
        chosen = helpful if definition == "helpful" else match
        rule = EvaluatorRule(name=name, evaluator=evaluator, config=config, definition=chosen,
                             **extra)  # fmt: skip
        evaluator_rule_save(rule=rule, actor=operator)


async def evaluations_of(run: Run, count: int) -> list[Evaluation]:
    async def done() -> list[Evaluation] | None:
        found = [e async for e in Evaluation.objects.filter(run=run).select_related(
            "rule", "score").order_by("rule__name")]  # fmt: skip
        ended = [e for e in found if e.status != Evaluation.Status.RUNNING]
        return ended if len(ended) >= count else None

    found: list[Evaluation] = await wait_for(done, what=f"{count} evaluations of run {run.pk}")
    return found


async def test_each_evaluator_scores_a_finished_run_and_the_judge_costs_apart(
    register: Callable[..., None], make_session: MakeSession, host: Any, operator_user: User
) -> None:
    register(LlmAgent(name="capitals", model=ScriptedLlm(responses=[CALL, "Paris is the capital."]),
                      tools=[get_capital_city]))  # fmt: skip
    await sync_to_async(model_price_set)(
        model="offline",
        input_per_mtok=Decimal("1000"),
        output_per_mtok=Decimal("2000"),
        as_of=date(2026, 1, 1),
        source="a test",
        actor=operator_user,
    )
    await sync_to_async(rules)(
        operator_user,
        ("a-judge", "llm_judge", "helpful", {"model": "offline"}),
        ("b-trajectory", "tool_trajectory", "match",
         {"expected_tools": [{"name": "get_capital_city", "args": {"country": "France"}}]}),
        ("c-response", "response_match", "helpful",
         {"reference": "The capital is Paris.", "threshold": 0.5}),
        ("d-regex", "regex", "helpful", {"pattern": r"\bParis\b"}),
        ("e-schema", "json_schema", "helpful", {"schema": {"type": "object"}}),
    )  # fmt: skip
    session = await sync_to_async(make_session)("capitals")
    run = await arun_enqueue(session=session, agent_name="capitals",
                             message=says("Capital of France?"), requested_by=None)  # fmt: skip
    assert (await run_ended(run.pk)).status == Run.Status.SUCCEEDED
    judge, trajectory, response, regex, schema = await evaluations_of(run, 5)

    assert [e.status for e in (judge, trajectory, response, regex)] == ["scored"] * 4
    assert (judge.score.label, judge.score.source, judge.score.author_name) == (  # type: ignore[union-attr]
        "yes",
        "evaluator",
        "evaluator:a-judge",
    )
    assert judge.explanation.startswith("Offline judge: the output names no failure")
    assert trajectory.score.value == 1.0 and response.score.label == "yes"  # type: ignore[union-attr]
    assert regex.score.label == "yes"  # type: ignore[union-attr]
    assert (schema.status, schema.score.label) == ("scored", "no")  # type: ignore[union-attr]
    assert "not JSON" in schema.explanation
    # The judge ran in a session of its own: its tokens and cost are there, not the agent's.
    assert judge.judge_session_id and judge.judge_session_id != session.pk
    assert judge.input_tokens and judge.input_tokens > 0 and judge.cost_usd and judge.cost_usd > 0
    used = await sync_to_async(sessions_usage)(session_ids=[session.pk, judge.judge_session_id])
    assert session.pk not in used  # a scripted model: the agent's own calls
    assert used[judge.judge_session_id].input == judge.input_tokens
    judged = await AgentSession.objects.aget(pk=judge.judge_session_id)
    assert (judged.app_name, judged.owner_id) == ("judge", None)
    # The scores are the run's, given by evaluators; the run is as it ended.
    scores = [s async for s in Score.objects.filter(session=session, source="evaluator")]
    assert len(scores) == 5 and {s.run_id for s in scores} == {run.pk}
    assert (await Run.objects.aget(pk=run.pk)).status == Run.Status.SUCCEEDED


async def test_a_judge_that_raises_or_times_out_is_recorded_and_the_run_is_unaffected(
    register: Callable[..., None], make_session: MakeSession, host: Any, operator_user: User
) -> None:
    register(LlmAgent(name="plain", model=ScriptedLlm(responses=["Fine."] * 3)))
    await sync_to_async(rules)(
        operator_user,
        ("broken", "llm_judge", "helpful", {"model": "broken-judge"}),
        ("slow", "llm_judge", "helpful", {"model": "slow-judge", "timeout_s": 0.3}),
        ("unknown-model", "llm_judge", "helpful", {"model": "nosuch-model-9"}),
    )  # fmt: skip
    session = await sync_to_async(make_session)("plain")
    run = await arun_enqueue(session=session, agent_name="plain", message=says("hi"),
                             requested_by=None)  # fmt: skip
    broken, slow, unknown = await evaluations_of(await run_ended(run.pk), 3)
    assert broken.status == "failed" and "provider is down" in broken.error
    assert slow.status == "failed" and "did not answer in 0.3 s" in slow.error
    assert unknown.status == "failed" and "nosuch-model-9" in unknown.error
    assert not await Score.objects.filter(session=session).aexists()
    found = await Run.objects.aget(pk=run.pk)
    assert (found.status, found.error) == (Run.Status.SUCCEEDED, "")
    # The next run of the session is served as ever.
    again = await arun_enqueue(session=session, agent_name="plain", message=says("again"),
                               requested_by=None)  # fmt: skip
    assert (await run_ended(again.pk)).status == Run.Status.SUCCEEDED


async def test_rules_filter_by_agent_and_outcome_and_sample(
    register: Callable[..., None], make_session: MakeSession, host: Any, operator_user: User
) -> None:
    register(LlmAgent(name="one", model=ScriptedLlm(responses=["Done."] * 10)))
    await sync_to_async(rules)(operator_user, ("only-two", "regex", "helpful", {"pattern": "."}),
                               agent_name="two")  # fmt: skip
    rule = await EvaluatorRule.objects.aget(name="only-two")
    failed_only = EvaluatorRule(name="failed-only", evaluator="regex", config={"pattern": "."},
                                definition_id=rule.definition_id, outcome="failed")  # fmt: skip
    await sync_to_async(evaluator_rule_save)(rule=failed_only, actor=operator_user)
    never = EvaluatorRule(name="never", evaluator="regex", config={"pattern": "."},
                          definition_id=rule.definition_id, sample_rate=0.0)  # fmt: skip
    await sync_to_async(evaluator_rule_save)(rule=never, actor=operator_user)
    session = await sync_to_async(make_session)("one")
    run = await arun_enqueue(session=session, agent_name="one", message=says("hi"),
                             requested_by=None)  # fmt: skip
    await run_ended(run.pk)
    for _ in range(20):
        await asyncio.sleep(0.02)
    assert not await Evaluation.objects.filter(run=run).aexists()
    # The sample is a share of runs, the same run always in or out.
    taken = sum(sampled("r", f"e-{n}", 0.25) for n in range(4000))
    assert 800 < taken < 1200
    assert all(sampled("r", "e-7", 0.25) == sampled("r", "e-7", 0.25) for _ in range(3))
