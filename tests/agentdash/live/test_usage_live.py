"""A run's totals grow while it streams: each flush that stores a model call of the run sends
the run again (a ``run`` change, its ``usage`` summed by the server), and what the client
ends with equals the sum of the model spans it was sent."""

from __future__ import annotations

import asyncio
from datetime import date
from decimal import Decimal

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from google.genai import types

from agentdash.agent_sessions.session_service import DjangoSessionService
from agentdash.changes.selectors import session_last_seq
from agentdash.dashboard.session.selectors import session_snapshot_data
from agentdash.live.pipeline import LivePipeline
from agentdash.runs.models import Run
from agentdash.spans.prices import model_price_set
from runtime import LlmAgent, LlmResponse, Runner, ScriptedLlm
from tests.agentdash.live.conftest import Connect, changes_until, hello
from tests.agentdash.stored import session_of

pytestmark = pytest.mark.django_db(transaction=True)


def answer(text: str, *, tokens_in: int, tokens_out: int, call: bool = False) -> LlmResponse:
    part = (
        types.Part(function_call=types.FunctionCall(name="look_up", args={"city": "Paris"}))
        if call
        else types.Part(text=text)
    )
    return LlmResponse(
        content=types.Content(role="model", parts=[part]),
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=tokens_in,
            candidates_token_count=tokens_out,
            cached_content_token_count=tokens_in // 2,
        ),
        model_version="scripted-1",
    )


async def test_a_runs_totals_grow_while_it_streams(
    connect: Connect, live: LivePipeline, alice: User
) -> None:
    await sync_to_async(model_price_set)(
        model="scripted",
        input_per_mtok=Decimal("1"),
        output_per_mtok=Decimal("4"),
        cached_input_per_mtok=Decimal("0.25"),
        as_of=date(2026, 11, 24),
        source="test",
        actor=None,
    )
    session = await sync_to_async(session_of)(alice, "s-usage")
    run = await Run.objects.acreate(
        session=session, agent_name="helper", invocation_id="inv-usage", message={}
    )
    may_answer = asyncio.Event()

    async def look_up(city: str) -> dict:
        """Look a city up."""
        await may_answer.wait()  # the run holds here: its first model call is stored by now
        return {"city": city, "country": "France"}

    agent = LlmAgent(
        name="helper",
        model=ScriptedLlm(
            responses=[
                answer("", tokens_in=1000, tokens_out=20, call=True),
                answer("It is France.", tokens_in=1200, tokens_out=6),
            ]
        ),
        tools=[look_up],
    )
    runner = Runner(agent=agent, app_name="app", session_service=DjangoSessionService())
    socket = await connect(alice, session.id)
    await hello(socket)

    async def drive() -> None:
        message = types.Content(role="user", parts=[types.Part(text="Where is Paris?")])
        async for _ in runner.run_async(
            user_id=session.user_id,
            session_id=session.id,
            new_message=message,
            invocation_id="inv-usage",
        ):
            pass

    task = asyncio.create_task(drive())

    def run_used(items: list[dict]) -> bool:
        return any(i["kind"] == "run" and i["data"]["usage"]["calls"] for i in items)

    seen, _ = await changes_until(socket, run_used)
    first = [i["data"] for i in seen if i["kind"] == "run"][-1]
    assert first["id"] == run.pk and first["usage"]["calls"] == 1  # mid-run: one call so far
    assert (first["usage"]["input"], first["usage"]["output"]) == (1000, 20)
    assert first["usage"]["cached"] == 500
    assert first["usage"]["cost_usd"] == pytest.approx((500 * 1 + 500 * 0.25 + 20 * 4) / 1e6)
    may_answer.set()
    await task
    await live.stop()

    last = await sync_to_async(session_last_seq)(session_id=session.id)
    rest, _ = await changes_until(socket, lambda items: bool(items) and items[-1]["seq"] >= last)
    items = seen + rest
    spans: dict[tuple[str, str], dict] = {}
    for item in items:
        if item["kind"] == "span":
            spans[(item["data"]["trace_id"], item["data"]["span_id"])] = item["data"]
    used = [span["usage"] for span in spans.values() if span["usage"]]
    assert len(used) == 2 and {u["model"] for u in used} == {"scripted-1"}
    final = [i["data"] for i in items if i["kind"] == "run"][-1]["usage"]
    assert final["calls"] == 2
    assert final["input"] == sum(u["input"] for u in used) == 2200
    assert final["output"] == sum(u["output"] for u in used) == 26
    assert final["cached"] == sum(u["cached"] for u in used) == 1100
    assert final["cost_usd"] == pytest.approx(sum(u["cost_usd"] for u in used), rel=1e-12)

    # The page's snapshot says the same, for the session and its run.
    snapshot = await sync_to_async(session_snapshot_data)(session=session, user=alice)
    assert snapshot["usage"] == final
    assert snapshot["runs"][-1]["usage"] == final
