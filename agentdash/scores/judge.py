"""The LLM judge: a one-turn agent on the model a rule names, asked the rule's rubric over a
run's material and answering a verdict as JSON. It runs in a session of its own (app
``judge``, no owner: operators see it), so its events, spans, tokens and cost are recorded
apart from the agent's — the evaluation links to it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from google.genai import types

from agentdash.agent_sessions.services import session_create
from agentdash.agent_sessions.session_service import DjangoSessionService
from agentdash.core.threads import in_worker_thread
from agentdash.runs import streaming
from agentdash.scores.evaluator_checks import (
    EvaluatorError,
    Material,
    Target,
    judge_answer,
    judge_prompt,
    judge_schema,
)
from agentdash.spans.totals import sessions_usage
from runtime import LlmAgent, Runner

JUDGE_APP = "judge"
JUDGE_USER = "evaluator"
INSTRUCTION = (
    "You are an evaluator of an AI agent's work. Follow the rubric you are given and answer "
    "only with the JSON asked for: the verdict as `value`, and why as `explanation`."
)


@dataclass(frozen=True)
class Judged:
    value: Any
    explanation: str
    session_id: str
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None


async def judge_run(
    *, rule_name: str, run_id: int, config: dict[str, Any], material: Material, target: Target
) -> Judged:
    """Ask the judge; its verdict, its session and what it used. ``EvaluatorError`` when it
    answered no verdict; the model's own errors propagate (the caller records them)."""
    session = await in_worker_thread(session_create)(
        app_name=JUDGE_APP, user_id=JUDGE_USER, title=f"{rule_name} on run {run_id}"[:120]
    )
    agent = LlmAgent(
        name="judge",
        model=config["model"],
        instruction=INSTRUCTION,
        generate_content_config=types.GenerateContentConfig(
            response_mime_type="application/json", response_schema=judge_schema(target)
        ),
    )
    runner = Runner(agent=agent, app_name=JUDGE_APP, session_service=DjangoSessionService())
    asked = judge_prompt(config["rubric"], material)
    prompt = types.Content(role="user", parts=[types.Part(text=asked)])
    answer = ""
    invocation = ""
    async for event in runner.run_async(
        user_id=JUDGE_USER, session_id=session.pk, new_message=prompt
    ):
        invocation = event.invocation_id or invocation
        if event.is_final_response() and event.content and not event.partial:
            answer = "".join(p.text or "" for p in event.content.parts or [] if not p.thought)
        if event.error_message:
            raise EvaluatorError(f"the judge's model failed: {event.error_message}")
    if invocation:
        await streaming.settle(invocation)  # its spans stored: their usage is read next
    used = (await in_worker_thread(sessions_usage)(session_ids=[session.pk])).get(session.pk)
    value, explanation = judge_answer(answer)
    usage = used.as_json() if used is not None else {}
    cost = usage.get("cost_usd")
    return Judged(value, explanation, session.pk, usage.get("input"), usage.get("output"),
                  float(cost) if cost is not None else None)  # fmt: skip
