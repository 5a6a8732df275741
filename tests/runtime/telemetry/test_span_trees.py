"""The span tree of each scenario, checked against a golden JSON file (the spec of our spans).

Each scenario runs agents with ``ScriptedLlm``; its finished spans are normalized into a tree
(name, kind, status, an allowlist of stable attributes, children by start time; no ids, no
timestamps) and compared with ``golden/<scenario>.json``. A missing or different golden fails.
To regenerate after an intended change: ``UPDATE_GOLDEN=1 pytest tests/runtime/telemetry``,
then read the diff — the goldens are the spec.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from runtime import (
    Agent,
    AgentTool,
    BaseAgent,
    Callback,
    CallbackError,
    Context,
    Event,
    InMemorySessionService,
    InMemorySwitchboard,
    LlmResponse,
    ParallelAgent,
    RunConfig,
    Runner,
    ScriptedLlm,
    SequentialAgent,
    StreamingMode,
    Switchboard,
)
from runtime.telemetry import tracing

GOLDEN_DIR = Path(__file__).parent / "golden"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"

ATTRIBUTE_ALLOWLIST = frozenset(
    {
        "gen_ai.operation.name",
        "gen_ai.agent.name",
        "gen_ai.request.model",
        "gen_ai.tool.name",
        "gen_ai.tool.type",
        "gen_ai.response.finish_reasons",
        "agentdash.span.kind",
        "agentdash.callback.name",
        "agentdash.callback.hook",
        "agentdash.callback.outcome",
        "agentdash.callback.style",
        "agentdash.skipped_by",
        "agentdash.replaced_by",
        "agentdash.transfer_to_agent",
    }
)
ATTRIBUTE_PREFIXES = ("gen_ai.usage.",)


# Running.


def _user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def _call(name: str, **args: Any) -> types.FunctionCall:
    # Fixed ids keep the run deterministic; ids never reach the normalized tree anyway.
    return types.FunctionCall(id=f"call-{name}", name=name, args=args)


def _answer(text: str, prompt_tokens: int = 12, output_tokens: int = 3) -> LlmResponse:
    return LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text=text)]),
        finish_reason=types.FinishReason.STOP,
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=prompt_tokens, candidates_token_count=output_tokens
        ),
    )


async def run_agent(
    agent: BaseAgent,
    text: str = "hello",
    *,
    switchboard: Switchboard | None = None,
    run_config: RunConfig | None = None,
) -> list[Event]:
    service = InMemorySessionService()
    session = await service.acreate_session(app_name="trees", user_id="u1")
    runner = Runner(agent=agent, app_name="trees", session_service=service, switchboard=switchboard)
    return [
        event
        async for event in runner.run_async(
            user_id="u1", session_id=session.id, new_message=_user(text), run_config=run_config
        )
    ]


def get_weather(city: str) -> dict[str, Any]:
    """The weather in a city."""
    return {"city": city, "sky": "sunny"}


def flaky_lookup(key: str) -> dict[str, Any]:
    """Looks a key up; always fails."""
    raise ValueError(f"lookup of {key!r} failed")


INVOKED: list[str] = []
"""Names of the scenario callbacks that really ran, to match against their spans."""


def before_model_noop(callback_context: Any, llm_request: Any) -> None:
    INVOKED.append("before_model_noop")


def after_model_noop(callback_context: Any, llm_response: Any) -> None:
    INVOKED.append("after_model_noop")


def before_tool_noop(tool: Any, args: Any, tool_context: Any) -> None:
    INVOKED.append("before_tool_noop")


def after_tool_noop(tool: Any, args: Any, tool_context: Any, tool_response: Any) -> None:
    INVOKED.append("after_tool_noop")


def canned_answer(callback_context: Any, llm_request: Any) -> LlmResponse:
    INVOKED.append("canned_answer")
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text="cached")]))


def fallback_result(tool: Any, args: Any, tool_context: Any, error: Exception) -> dict[str, Any]:
    INVOKED.append("fallback_result")
    return {"fallback": True}


class Tally(Callback):
    """An any-agent callback implementing all six hooks (the defaults' set of hooks may change;
    the goldens should not change with it)."""

    def _seen(self, context: Context) -> Context:
        INVOKED.append("Tally")
        return context

    def before_agent_invocation(self, context: Context, *args: Any, **kwargs: Any) -> Context:
        return self._seen(context)

    def before_llm_call(self, context: Context, *args: Any, **kwargs: Any) -> Context:
        return self._seen(context)

    def after_llm_call(self, context: Context, *args: Any, **kwargs: Any) -> Context:
        return self._seen(context)

    def before_tool_execution(self, context: Context, *args: Any, **kwargs: Any) -> Context:
        return self._seen(context)

    def after_tool_execution(self, context: Context, *args: Any, **kwargs: Any) -> Context:
        return self._seen(context)

    def after_agent_invocation(self, context: Context, *args: Any, **kwargs: Any) -> Context:
        return self._seen(context)


class Tripwire(Callback):
    """An any-agent callback that stops the run before any tool executes."""

    def before_tool_execution(self, context: Context, *args: Any, **kwargs: Any) -> Context:
        INVOKED.append("Tripwire")
        raise RuntimeError("no tools today")


# Scenarios: each runs one invocation; its spans are the golden tree.


async def single_agent_tool_call(spans: InMemorySpanExporter) -> None:
    """One tool call then an answer, with the four model/tool callbacks (ADK style) and an
    any-agent callback implementing its six hooks."""
    agent = Agent(
        name="weather",
        model=ScriptedLlm(responses=[_call("get_weather", city="Paris"), _answer("Sunny.")]),
        tools=[get_weather],
        before_model_callback=before_model_noop,
        after_model_callback=after_model_noop,
        before_tool_callback=before_tool_noop,
        after_tool_callback=after_tool_noop,
        callbacks=[Tally()],
    )
    await run_agent(agent, "Weather in Paris?")


async def before_model_short_circuit(spans: InMemorySpanExporter) -> None:
    """``before_model`` returns a response: the model is not called."""
    llm = ScriptedLlm(responses=[])
    agent = Agent(name="cached", model=llm, before_model_callback=canned_answer, callbacks=[])
    events = await run_agent(agent)
    assert events[-1].text == "cached" and llm.requests == []


async def disabled_callback(spans: InMemorySpanExporter) -> None:
    """A switched-off callback does not run; its span says so."""
    switchboard = InMemorySwitchboard()
    switchboard.disable("canned_answer", agent_name="guarded")
    agent = Agent(
        name="guarded",
        model=ScriptedLlm(responses=[_answer("From the model.")]),
        before_model_callback=canned_answer,
        callbacks=[],
    )
    events = await run_agent(agent, switchboard=switchboard)
    assert events[-1].text == "From the model."


async def raising_tool(spans: InMemorySpanExporter) -> None:
    """A tool raises and no ``on_tool_error`` callback recovers: the run fails."""
    agent = Agent(
        name="fragile",
        model=ScriptedLlm(responses=[_call("flaky_lookup", key="k"), _answer("unreached")]),
        tools=[flaky_lookup],
        callbacks=[],
    )
    with pytest.raises(ValueError, match="lookup of 'k' failed"):
        await run_agent(agent)
    # The exception is recorded (as a span event) once, where it happened; ancestors only
    # get the error status.
    recorded = [
        s.name for s in spans.get_finished_spans() if any(e.name == "exception" for e in s.events)
    ]
    assert recorded == ["execute_tool flaky_lookup"]


async def tool_error_recovered(spans: InMemorySpanExporter) -> None:
    """``on_tool_error`` turns the failure into a result: the tool span alone is an error."""
    agent = Agent(
        name="resilient",
        model=ScriptedLlm(responses=[_call("flaky_lookup", key="k"), _answer("Used a fallback.")]),
        tools=[flaky_lookup],
        on_tool_error_callback=fallback_result,
        callbacks=[],
    )
    events = await run_agent(agent)
    assert events[-1].text == "Used a fallback."


async def callback_raises(spans: InMemorySpanExporter) -> None:
    """An any-agent hook raises: its span is where the error is, and the run stops."""
    agent = Agent(
        name="tripped",
        model=ScriptedLlm(responses=[_call("get_weather", city="Oslo"), _answer("unreached")]),
        tools=[get_weather],
        callbacks=[Tripwire()],
    )
    with pytest.raises(CallbackError) as caught:
        await run_agent(agent)
    assert caught.value.callback_name == "Tripwire"
    assert caught.value.hook == "before_tool_execution"


async def sequential_agents(spans: InMemorySpanExporter) -> None:
    first = Agent(name="drafter", model=ScriptedLlm(responses=[_answer("Draft.")]), callbacks=[])
    second = Agent(
        name="reviewer", model=ScriptedLlm(responses=[_answer("Reviewed.")]), callbacks=[]
    )
    await run_agent(SequentialAgent(name="pipeline", sub_agents=[first, second], callbacks=[]))


async def transfer_to_sub_agent(spans: InMemorySpanExporter) -> None:
    billing = Agent(
        name="billing",
        description="Answers billing questions.",
        model=ScriptedLlm(responses=[_answer("Your invoice is paid.")]),
        callbacks=[],
    )
    root = Agent(
        name="frontdesk",
        model=ScriptedLlm(responses=[_call("transfer_to_agent", agent_name="billing")]),
        sub_agents=[billing],
        callbacks=[],
    )
    events = await run_agent(root, "Is my invoice paid?")
    assert events[-1].author == "billing"


async def agent_tool(spans: InMemorySpanExporter) -> None:
    """An agent called as a tool runs its own invocation, nested under the tool's span."""
    helper = Agent(
        name="translator",
        description="Translates text.",
        model=ScriptedLlm(responses=[_answer("Bonjour")]),
        callbacks=[],
    )
    root = Agent(
        name="writer",
        model=ScriptedLlm(responses=[_call("translator", request="Hello"), _answer("Bonjour!")]),
        tools=[AgentTool(helper)],
        callbacks=[],
    )
    events = await run_agent(root)
    assert events[-1].text == "Bonjour!"


async def parallel_agents(spans: InMemorySpanExporter) -> None:
    # One model per branch: a shared script would be consumed in a nondeterministic order.
    left = Agent(name="left", model=ScriptedLlm(responses=[_answer("L.")]), callbacks=[])
    right = Agent(name="right", model=ScriptedLlm(responses=[_answer("R.")]), callbacks=[])
    await run_agent(ParallelAgent(name="fanout", sub_agents=[left, right], callbacks=[]))


async def streaming_answer(spans: InMemorySpanExporter) -> None:
    """Partial chunks are events, not spans: one model span for the whole streamed answer."""
    agent = Agent(
        name="streamer",
        model=ScriptedLlm(responses=[_answer("one two three")]),
        after_model_callback=after_model_noop,
        callbacks=[Tally()],
    )
    events = await run_agent(agent, run_config=RunConfig(streaming_mode=StreamingMode.SSE))
    assert [bool(e.partial) for e in events] == [True, True, True, False]
    # The model callbacks run once for the whole answer, not per chunk.
    assert INVOKED == ["Tally", "Tally", "after_model_noop", "Tally", "Tally"]
    # The streamed call's span says how long its first chunk took: within the call.
    (model,) = [s for s in spans.get_finished_spans() if s.name.startswith("generate_content")]
    attributes = dict(model.attributes or {})
    waited = attributes["gen_ai.response.time_to_first_token"]
    assert isinstance(waited, float)
    assert 0 <= waited * 1e9 <= (model.end_time or 0) - (model.start_time or 0)


SCENARIOS: dict[str, Callable[[InMemorySpanExporter], Awaitable[None]]] = {
    fn.__name__: fn
    for fn in (
        single_agent_tool_call,
        before_model_short_circuit,
        disabled_callback,
        raising_tool,
        tool_error_recovered,
        callback_raises,
        sequential_agents,
        transfer_to_sub_agent,
        agent_tool,
        parallel_agents,
        streaming_answer,
    )
}

# Spans whose agent children run concurrently: those children are ordered by name.
PARALLEL_SPANS = frozenset({"invoke_agent fanout"})


# Normalizing.


def _value(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _keep(key: str) -> bool:
    return key in ATTRIBUTE_ALLOWLIST or key.startswith(ATTRIBUTE_PREFIXES)


def _node(span: ReadableSpan, children: list[dict[str, Any]]) -> dict[str, Any]:
    attributes = dict(span.attributes or {})
    return {
        "name": span.name,
        "kind": span.kind.name,
        "status": span.status.status_code.name,
        "attributes": {k: _value(attributes[k]) for k in sorted(attributes) if _keep(k)},
        "children": children,
    }


def _order_parallel(children: list[ReadableSpan]) -> list[ReadableSpan]:
    """Agent children sorted by name, in the places agent children hold by start time."""
    agents = [c for c in children if (c.attributes or {}).get("agentdash.span.kind") == "agent"]
    by_name = iter(sorted(agents, key=lambda s: s.name))
    return [next(by_name) if c in agents else c for c in children]


def span_tree(finished: Sequence[ReadableSpan]) -> list[dict[str, Any]]:
    """Root nodes of the normalized tree (one per trace root), children by start time."""
    ids = {s.context.span_id for s in finished}
    kids: dict[int | None, list[ReadableSpan]] = {}
    for s in finished:
        parent = s.parent.span_id if s.parent is not None else None
        kids.setdefault(parent if parent in ids else None, []).append(s)

    def build(span: ReadableSpan) -> dict[str, Any]:
        children = sorted(kids.get(span.context.span_id, []), key=lambda c: c.start_time or 0)
        if span.name in PARALLEL_SPANS:
            children = _order_parallel(children)
        return _node(span, [build(c) for c in children])

    return [build(s) for s in sorted(kids.get(None, []), key=lambda s: s.start_time or 0)]


# Checks.


def _attr(span: ReadableSpan, key: str) -> Any:
    return (span.attributes or {}).get(key)


def check_structure(finished: Sequence[ReadableSpan]) -> None:
    """Facts every scenario's spans obey, whatever the golden says."""
    assert finished, "the run produced no spans"
    assert len({s.context.trace_id for s in finished}) == 1, "spans of one run share a trace"
    by_id = {s.context.span_id: s for s in finished}
    roots = [s for s in finished if s.parent is None]
    assert [_attr(s, "agentdash.span.kind") for s in roots] == ["invocation"]
    for s in finished:
        if s.parent is not None:
            assert s.parent.span_id in by_id, f"{s.name}: parent span missing from the export"
        kind = _attr(s, "agentdash.span.kind")
        if kind in ("model", "tool"):
            # The nearest agent ancestor is the agent that made the call.
            parent = by_id[s.parent.span_id] if s.parent else None
            while parent is not None and _attr(parent, "agentdash.span.kind") != "agent":
                parent = by_id[parent.parent.span_id] if parent.parent else None
            assert parent is not None, f"{s.name} is outside any agent span"
            assert _attr(parent, "gen_ai.agent.name") == _attr(s, "gen_ai.agent.name")
            assert _attr(by_id[s.parent.span_id], "agentdash.span.kind") == "agent", (
                f"{s.name} must be a direct child of its agent span"
            )
        if kind == "callback":
            assert not [c for c in finished if c.parent and c.parent.span_id == s.context.span_id]
            assert _attr(s, "agentdash.callback.outcome") in (
                "passed",
                "overridden",
                "raised",
                "disabled",
            )
        recovered = _attr(s, "agentdash.replaced_by") is not None
        if s.status.status_code is StatusCode.ERROR and s.parent is not None and not recovered:
            assert by_id[s.parent.span_id].status.status_code is StatusCode.ERROR, (
                f"an error on {s.name} that no callback recovered must reach its ancestors"
            )


# The tests.


def test_runtime_tracer_follows_the_global_provider(spans: InMemorySpanExporter) -> None:
    # Created at import time, before the conftest set the SDK provider: a proxy.
    assert isinstance(tracing.tracer, trace.ProxyTracer)
    with tracing.start_span("probe", {"agentdash.span.kind": "probe"}) as span:
        assert span.get_span_context().is_valid
    assert [s.name for s in spans.get_finished_spans()] == ["probe"]


def test_every_golden_file_has_a_scenario() -> None:
    orphans = sorted(p.stem for p in GOLDEN_DIR.glob("*.json") if p.stem not in SCENARIOS)
    assert not orphans, f"golden files without a scenario: {orphans}"


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
async def test_span_tree_matches_golden(
    scenario: str, spans: InMemorySpanExporter, started_spans: list[Any]
) -> None:
    INVOKED.clear()
    await SCENARIOS[scenario](spans)
    finished = spans.get_finished_spans()

    unended = [s.name for s in started_spans if s.end_time is None]
    assert not unended, f"spans left open: {unended}"
    assert len(started_spans) == len(finished)
    check_structure(finished)
    ran = sorted(
        _attr(s, "agentdash.callback.name")
        for s in finished
        if _attr(s, "agentdash.callback.name") in INVOKED
        and _attr(s, "agentdash.callback.outcome") != "disabled"
    )
    assert ran == sorted(INVOKED), "every callback invocation has its own span"

    tree = span_tree(finished)
    text = json.dumps(tree, indent=2, ensure_ascii=False) + "\n"
    golden = GOLDEN_DIR / f"{scenario}.json"
    if UPDATE:
        GOLDEN_DIR.mkdir(exist_ok=True)
        golden.write_text(text, encoding="utf-8")
    assert golden.exists(), f"{golden} is missing; generate it with UPDATE_GOLDEN=1"
    assert json.loads(golden.read_text(encoding="utf-8")) == tree, (
        f"span tree differs from {golden.name}; if intended, regenerate with UPDATE_GOLDEN=1 "
        "and review the diff"
    )


async def test_a_cancelled_run_marks_the_spans_it_stopped(spans: InMemorySpanExporter) -> None:
    """Cancelling the task that runs an agent (what a worker does when a cancel is asked for)
    ends every open span with ``agentdash.cancelled``; spans that had ended do not get it."""
    import asyncio

    started = asyncio.Event()

    async def slow_lookup(city: str) -> str:
        """Looks a city up, slowly."""
        started.set()
        await asyncio.sleep(30)
        return city

    script = [_call("slow_lookup", city="x"), _answer("unreached")]
    agent = Agent(name="a", model=ScriptedLlm(responses=script), tools=[slow_lookup], callbacks=[])
    service = InMemorySessionService()
    session = await service.acreate_session(app_name="app", user_id="u")
    runner = Runner(agent=agent, app_name="app", session_service=service)

    async def drive() -> None:
        message = types.Content(role="user", parts=[types.Part(text="go")])
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            pass

    task = asyncio.create_task(drive())
    await asyncio.wait_for(started.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    finished = {s.name: s for s in spans.get_finished_spans()}
    cancelled = {n for n, s in finished.items() if s.attributes.get("agentdash.cancelled")}
    assert "execute_tool slow_lookup" in cancelled and "invoke_agent a" in cancelled
    for name in cancelled:
        assert finished[name].status.status_code is StatusCode.ERROR
    model_call = next(n for n in finished if n.startswith("generate_content"))
    assert model_call not in cancelled  # it had ended before the cancel


async def test_only_a_streamed_call_says_when_its_first_token_came(
    spans: InMemorySpanExporter,
) -> None:
    agent = Agent(name="plain", model=ScriptedLlm(responses=[_answer("one two")]), callbacks=[])
    await run_agent(agent)
    (model,) = [s for s in spans.get_finished_spans() if s.name.startswith("generate_content")]
    assert "gen_ai.response.time_to_first_token" not in dict(model.attributes or {})
