"""The guardrails in real runs of the run host: policies read from the database at every
step (an operator's edit applies to the next step of a running agent), switched off and on
for a session, and every decision stored where the guardrails pages count it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from google.genai import types

from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.controls.models import Policy
from agentdash.controls.services import callback_setting_set, policy_create, policy_update
from agentdash.controls.switch_broadcast import callback_change_publish
from agentdash.controls.switchboard import CallbackSettingChange
from agentdash.demo.guardrails import guarded
from agentdash.runs.models import Run
from agentdash.runs.services import arun_enqueue
from agentdash.spans import guardrail_log
from runtime import LlmAgent, ScriptedLlm
from tests.agentdash.runs.conftest import run_ended, says, wait_for
from tests.agentdash.runs.gates import Gate

pytestmark = pytest.mark.django_db(transaction=True)

MakeSession = Callable[[str], AgentSession]


def lookup(order_id: str) -> dict[str, Any]:
    """Looks an order up."""
    return {"order": order_id, "status": "shipped"}


def last_tool_result(llm: ScriptedLlm, index: int) -> dict[str, Any]:
    part = (llm.requests[index].contents[-1].parts or [])[0]
    assert part.function_response is not None
    return dict(part.function_response.response or {})


async def decisions(session_id: str) -> list[tuple[str, str, str]]:
    def read() -> list[tuple[str, str, str]]:
        rows = guardrail_log.decisions_list(
            spans=guardrail_log.session_decisions(session_id=session_id)
        )
        return [(r.guardrail, r.decision, r.reason) for r in reversed(rows)]

    return await sync_to_async(read)()


async def test_a_policy_edited_mid_run_governs_the_next_tool_call(
    register: Callable[..., None], make_session: MakeSession, host: Any
) -> None:
    gate = Gate()
    llm = ScriptedLlm(
        responses=[
            types.FunctionCall(name="slow_lookup", args={"topic": "tea"}),
            types.FunctionCall(name="lookup", args={"order_id": "7"}),
            "Done.",
        ]
    )
    register(LlmAgent(name="guarded_shop", model=llm, tools=[gate.tool, lookup], **guarded()))
    policy = await sync_to_async(policy_create)(
        name="shop tools",
        kind="tool_guard",
        config={"allowed_tools": ["slow_lookup", "lookup"]},
        agents=["guarded_shop"],
        actor=None,
    )
    session = await sync_to_async(make_session)("guarded_shop")
    run = await arun_enqueue(
        session=session, agent_name="guarded_shop", message=says("tea?"), requested_by=None
    )
    await asyncio.wait_for(gate.entered.wait(), 60)
    # While the agent waits in its first tool, an operator takes lookup off the list.
    await sync_to_async(policy_update)(
        policy=policy,
        config={"allowed_tools": ["slow_lookup"]},
        enabled=True,
        agents=["guarded_shop"],
        actor=None,
        reason="no more lookups",
        expected_version=1,
    )
    gate.release.set()
    assert (await run_ended(run.pk)).status == Run.Status.SUCCEEDED
    assert last_tool_result(llm, 2) == {"error": "Tool call blocked: tool 'lookup' is not allowed."}

    async def stored() -> list[tuple[str, str, str]]:
        found = await decisions(session.id)
        return found if any(d == "blocked" for _, d, _ in found) else []

    found = await wait_for(stored, what="the decisions to be stored")
    guard = [(d, r) for g, d, r in found if g == "tool-guard"]
    assert guard == [
        ("allowed", "slow_lookup and its arguments are allowed"),
        ("blocked", "tool 'lookup' is not allowed"),
    ]
    rows = await sync_to_async(
        lambda: guardrail_log.decisions_list(
            spans=guardrail_log.session_decisions(session_id=session.id), decision="blocked"
        )
    )()
    assert [r.policy for r in rows] == ["shop tools@2"]


async def test_switched_off_for_the_session_then_on_again(
    register: Callable[..., None], make_session: MakeSession, host: Any
) -> None:
    llm = ScriptedLlm(responses=["model answer", "model answer again"])
    register(LlmAgent(name="screened", model=llm, **guarded(tools=False)))
    await sync_to_async(policy_create)(
        name="screen",
        kind="input_screen",
        config={"blocked_terms": ["lawsuit"], "reply": "Not here."},
        agents=["screened"],
        actor=None,
    )
    session = await sync_to_async(make_session)("screened")

    async def send(text: str) -> str:
        run = await arun_enqueue(
            session=session, agent_name="screened", message=says(text), requested_by=None
        )
        assert (await run_ended(run.pk)).status == Run.Status.SUCCEEDED
        return await sync_to_async(_last_answer)(session.id)

    async def switch(enabled: bool) -> None:
        setting = await sync_to_async(callback_setting_set)(
            agent_name="screened",
            callback_name="input-screen",
            enabled=enabled,
            session_id=session.id,
            actor=None,
            reason="test",
        )
        await callback_change_publish(CallbackSettingChange.for_setting(setting))

        async def applied() -> bool:
            return (
                host.switchboard.is_enabled(
                    agent_name="screened", callback_name="input-screen", session_id=session.id
                )
                is enabled
            )

        await wait_for(applied, what="the switch to apply")

    assert await send("about the lawsuit") == "Not here."
    await switch(False)
    assert await send("about the lawsuit") == "model answer"
    await switch(True)
    assert await send("about the lawsuit") == "Not here."
    assert len(llm.requests) == 1


def _last_answer(session_id: str) -> str:
    for event in SessionEvent.objects.filter(session_id=session_id).order_by("-seq"):
        parts = ((event.data or {}).get("content") or {}).get("parts") or []
        text = "".join(p.get("text") or "" for p in parts)
        if text and event.author != "user":
            return text
    return ""


async def test_step_limits_stop_a_run_with_a_clear_error(
    register: Callable[..., None], make_session: MakeSession, host: Any
) -> None:
    llm = ScriptedLlm(
        responses=[types.FunctionCall(name="lookup", args={"order_id": str(i)}) for i in range(4)]
    )
    register(LlmAgent(name="looper", model=llm, tools=[lookup], **guarded()))
    await sync_to_async(policy_create)(
        name="two tools",
        kind="step_limits",
        config={"max_tool_calls": 2},
        agents=["looper"],
        actor=None,
    )
    session = await sync_to_async(make_session)("looper")
    run = await arun_enqueue(
        session=session, agent_name="looper", message=says("loop"), requested_by=None
    )
    ended = await run_ended(run.pk)
    assert ended.status == Run.Status.FAILED
    assert "step limit reached: this run made 2 tool calls; the step limit is 2" in ended.error
    assert "policy two tools@1" in ended.error


async def test_rate_limit_counts_per_user_in_the_database() -> None:
    from agentdash.controls.services import rate_window_hit

    hit = sync_to_async(rate_window_hit)
    assert await hit(key="a\x1falice\x1flookup", limit=2, window_s=60, now=1000.0) is None
    assert await hit(key="a\x1falice\x1flookup", limit=2, window_s=60, now=1001.0) is None
    wait = await hit(key="a\x1falice\x1flookup", limit=2, window_s=60, now=1002.0)
    assert wait == pytest.approx(18.0)  # the window 960..1020 ends in 18 s
    assert await hit(key="a\x1fbob\x1flookup", limit=2, window_s=60, now=1002.0) is None
    assert await hit(key="a\x1falice\x1flookup", limit=2, window_s=60, now=1020.0) is None
    assert await sync_to_async(Policy.objects.count)() == 0  # nothing else written
