from __future__ import annotations

import asyncio

import pytest
from google.genai import types

from runtime import (
    Agent,
    BaseAgent,
    Event,
    InMemorySessionService,
    InvocationContext,
    LoopAgent,
    ParallelAgent,
    Runner,
    ScriptedLlm,
    SequentialAgent,
    ToolContext,
)


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def run(
    agent: BaseAgent, text: str, *, state: dict | None = None
) -> tuple[list[Event], dict]:
    service = InMemorySessionService()
    session = service.create_session(app_name="app", user_id="u", state=state)
    runner = Runner(agent=agent, app_name="app", session_service=service)
    events = [
        e
        async for e in runner.run_async(user_id="u", session_id=session.id, new_message=user(text))
    ]
    stored = service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert stored is not None
    return events, stored.state


async def test_sequential_runs_in_order_and_shares_state() -> None:
    writer = Agent(name="writer", model=ScriptedLlm(responses=["draft"]), output_key="draft")
    reviewer_llm = ScriptedLlm(responses=["looks good"])
    reviewer = Agent(name="reviewer", model=reviewer_llm, instruction="Review: {draft}")
    events, state = await run(SequentialAgent(name="pipeline", sub_agents=[writer, reviewer]), "go")
    assert [(e.author, e.text) for e in events] == [("writer", "draft"), ("reviewer", "looks good")]
    assert state["draft"] == "draft"
    assert "Review: draft" in str(reviewer_llm.requests[0].config.system_instruction)
    # The reviewer sees the writer's turn as context, not as its own words.
    texts = [p.text for c in reviewer_llm.requests[0].contents for p in c.parts or []]
    assert "[writer] said: draft" in texts


async def test_loop_stops_on_escalate() -> None:
    def finish(tool_context: ToolContext) -> str:
        """Stop the loop."""
        tool_context.actions.escalate = True
        return "done"

    worker = Agent(name="worker", model=ScriptedLlm(responses=["step 1", "step 2"]))
    checker = Agent(
        name="checker",
        model=ScriptedLlm(
            responses=["not yet", types.FunctionCall(name="finish", args={}), "finished"]
        ),
        tools=[finish],
    )
    loop = LoopAgent(name="loop", sub_agents=[worker, checker], max_iterations=5)
    events, _ = await run(loop, "go")
    authors = [
        (e.author, e.text or (e.get_function_calls() and "call") or "response") for e in events
    ]
    assert authors == [
        ("worker", "step 1"),
        ("checker", "not yet"),
        ("worker", "step 2"),
        ("checker", "call"),
        ("checker", "response"),
        ("checker", "finished"),  # the escalating agent ends its turn; then the loop stops
    ]
    assert events[-2].actions.escalate is True


async def test_loop_respects_max_iterations() -> None:
    worker = Agent(name="worker", model=ScriptedLlm(responses=["a", "b", "c"]))
    events, _ = await run(LoopAgent(name="loop", sub_agents=[worker], max_iterations=2), "go")
    assert [e.text for e in events] == ["a", "b"]


def test_loop_rejects_zero_iterations() -> None:
    with pytest.raises(ValueError, match="max_iterations"):
        LoopAgent(name="loop", max_iterations=0)


async def test_parallel_runs_concurrently_on_separate_branches() -> None:
    started: list[str] = []
    both_started = asyncio.Event()

    def make(name: str) -> Agent:
        async def wait_for_sibling(llm_request: object) -> str:
            started.append(name)
            if len(started) == 2:
                both_started.set()
            await asyncio.wait_for(both_started.wait(), timeout=5)
            return f"{name} done"

        class Waiting(ScriptedLlm):
            async def generate_content_async(self, llm_request, stream=False):  # type: ignore[no-untyped-def]
                text = await wait_for_sibling(llm_request)
                self.requests.append(llm_request)
                yield (await _text(text))

        return Agent(name=name, model=Waiting())

    events, _ = await run(ParallelAgent(name="fan", sub_agents=[make("a"), make("b")]), "go")
    assert sorted(e.text for e in events) == ["a done", "b done"]
    assert {e.branch for e in events} == {"fan.a", "fan.b"}


async def _text(text: str):  # type: ignore[no-untyped-def]
    from runtime import LlmResponse

    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


async def test_parallel_branches_do_not_see_each_other() -> None:
    a_llm = ScriptedLlm(responses=["from a"])
    b_llm = ScriptedLlm(responses=["from b"])
    fan = ParallelAgent(
        name="fan", sub_agents=[Agent(name="a", model=a_llm), Agent(name="b", model=b_llm)]
    )
    after_llm = ScriptedLlm(responses=["merged"])
    pipeline = SequentialAgent(name="p", sub_agents=[fan, Agent(name="after", model=after_llm)])
    await run(pipeline, "go")
    seen_by_b = [p.text for c in b_llm.requests[0].contents for p in c.parts or []]
    assert not any("from a" in (t or "") for t in seen_by_b)
    seen_after = [p.text for c in after_llm.requests[0].contents for p in c.parts or []]
    assert "[a] said: from a" in seen_after and "[b] said: from b" in seen_after


async def test_parallel_failure_cancels_siblings_and_raises() -> None:
    fan = ParallelAgent(
        name="fan",
        sub_agents=[
            Agent(name="ok", model=ScriptedLlm(responses=["fine"])),
            Agent(name="bad", model=ScriptedLlm(responses=[ValueError("boom")])),
        ],
    )
    with pytest.raises(ValueError, match="boom"):
        await run(fan, "go")


async def test_transfer_to_sub_agent_and_next_turn_goes_to_it() -> None:
    billing_llm = ScriptedLlm(responses=["billing here", "still billing"])
    billing = Agent(name="billing", description="Handles invoices", model=billing_llm)
    root_llm = ScriptedLlm(
        responses=[types.FunctionCall(name="transfer_to_agent", args={"agent_name": "billing"})]
    )
    root = Agent(name="desk", model=root_llm, sub_agents=[billing])
    service = InMemorySessionService()
    session = service.create_session(app_name="app", user_id="u")
    runner = Runner(agent=root, app_name="app", session_service=service)
    first = [
        e
        async for e in runner.run_async(
            user_id="u", session_id=session.id, new_message=user("my invoice")
        )
    ]
    assert [e.author for e in first] == ["desk", "desk", "billing"]
    assert first[1].actions.transfer_to_agent == "billing"
    assert first[-1].text == "billing here"
    declared = root_llm.requests[0].config.tools[0].function_declarations
    assert "transfer_to_agent" in [d.name for d in declared]
    # The next message goes straight to the agent that answered last.
    second = [
        e
        async for e in runner.run_async(
            user_id="u", session_id=session.id, new_message=user("and?")
        )
    ]
    assert [e.author for e in second] == ["billing"]
    assert second[0].text == "still billing"


async def test_transfer_to_unknown_agent_tells_the_model() -> None:
    root_llm = ScriptedLlm(
        responses=[
            types.FunctionCall(name="transfer_to_agent", args={"agent_name": "ghost"}),
            "sorry",
        ]
    )
    root = Agent(name="desk", model=root_llm, sub_agents=[Agent(name="real", model="offline")])
    events, _ = await run(root, "hi")
    response = events[1].get_function_responses()[0].response
    assert response is not None and "ghost" in response["error"] and "real" in response["error"]
    assert events[-1].text == "sorry"


async def test_disallow_transfer_to_parent_keeps_next_turn_at_root() -> None:
    child = Agent(
        name="child",
        model=ScriptedLlm(responses=["child answer"]),
        disallow_transfer_to_parent=True,
    )
    root_llm = ScriptedLlm(
        responses=[
            types.FunctionCall(name="transfer_to_agent", args={"agent_name": "child"}),
            "root again",
        ]
    )
    root = Agent(name="root", model=root_llm, sub_agents=[child])
    service = InMemorySessionService()
    session = service.create_session(app_name="app", user_id="u")
    runner = Runner(agent=root, app_name="app", session_service=service)
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=user("x")):
        pass
    second = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message=user("y"))
    ]
    assert [e.author for e in second] == ["root"]


def test_agent_tree_rules() -> None:
    child = Agent(name="child", model="offline")
    Agent(name="p1", model="offline", sub_agents=[child])
    with pytest.raises(ValueError, match="already has parent"):
        Agent(name="p2", model="offline", sub_agents=[child])
    with pytest.raises(ValueError, match="identifier"):
        Agent(name="not valid", model="offline")
    with pytest.raises(ValueError, match="reserved"):
        Agent(name="user", model="offline")
    with pytest.raises(TypeError, match="unexpected argument"):
        Agent(name="x", model="offline", bogus=1)


async def test_custom_agent_with_declared_fields() -> None:
    class Echo(BaseAgent):
        prefix: str

        async def _run_async_impl(self, ctx: InvocationContext):  # type: ignore[no-untyped-def]
            text = ctx.user_content.parts[0].text if ctx.user_content else ""
            yield Event(
                author=self.name,
                invocation_id=ctx.invocation_id,
                content=types.Content(role="model", parts=[types.Part(text=self.prefix + text)]),
            )

    events, _ = await run(Echo(name="echo", prefix=">> ", callbacks=[]), "hello")
    assert [e.text for e in events] == [">> hello"]


async def test_model_inherited_from_parent() -> None:
    shared = ScriptedLlm(responses=["from child"])
    child = Agent(name="child")
    root = SequentialAgent(name="root", sub_agents=[child])
    with pytest.raises(ValueError, match="no model"):
        await run(root, "x")
    parent = Agent(name="parent", model=shared, sub_agents=[Agent(name="kid")])
    assert parent.sub_agents[0].canonical_model is shared  # type: ignore[attr-defined]


def test_an_agent_class_must_implement_its_run() -> None:
    class Incomplete(BaseAgent):
        pass

    with pytest.raises(TypeError, match="_run_async_impl"):
        Incomplete(name="x")  # type: ignore[abstract]
