"""any-agent's callback documentation, run on our runtime.

The callback classes are the documentation's, with only the import lines changed (and one doc
bug fixed, marked below); the agents run on ``ScriptedLlm`` and the assertions read the spans.
"""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from runtime import (
    Agent,
    BaseAgent,
    Callback,
    CallbackError,
    Context,
    Event,
    GenAI,
    InMemorySessionService,
    InMemorySwitchboard,
    ParallelAgent,
    Runner,
    ScriptedLlm,
    SequentialAgent,
    StepLogger,
    Switchboard,
    get_default_callbacks,
)

SUMMARY = "agentdash.step.summary"

# The documentation's callbacks.


class CountSearchWeb(Callback):
    def after_tool_execution(self, context: Context, *args, **kwargs) -> Context:
        if "search_web_count" not in context.shared:
            context.shared["search_web_count"] = 0
        if context.current_span.attributes[GenAI.TOOL_NAME] == "search_web":
            context.shared["search_web_count"] += 1
        return context


class LimitSearchWeb(Callback):
    def __init__(self, max_calls: int):
        self.max_calls = max_calls

    def before_tool_execution(self, context: Context, *args, **kwargs) -> Context:
        # Doc bug: the documentation reads ``context.shared["search_web_count"]``, but this
        # hook runs before the first tool (and so before CountSearchWeb's first
        # after_tool_execution): the key is not there yet and the run would stop with a
        # KeyError whatever the order (see test_the_documented_limit_fails_on_the_first_tool).
        if context.shared.get("search_web_count", 0) > self.max_calls:
            raise RuntimeError("Reached limit of `search_web` calls.")


class DocumentedLimitSearchWeb(Callback):
    """LimitSearchWeb exactly as documented, to show the doc bug."""

    def __init__(self, max_calls: int):
        self.max_calls = max_calls

    def before_tool_execution(self, context: Context, *args, **kwargs) -> Context:
        if context.shared["search_web_count"] > self.max_calls:
            raise RuntimeError("Reached limit of `search_web` calls.")


class SensitiveDataOffloader(Callback):
    def __init__(self, output_dir: str) -> None:
        self.output_dir = Path(output_dir)
        self.output_dir.mkdir(exist_ok=True, parents=True)

    def before_llm_call(self, context: Context, *args, **kwargs) -> Context:
        span = context.current_span

        if input_messages := span.attributes.get(GenAI.INPUT_MESSAGES):
            output_file = self.output_dir / f"{span.get_span_context().trace_id}.txt"
            output_file.write_text(str(input_messages))

            span.set_attribute(GenAI.INPUT_MESSAGES, json.dumps({"ref": str(output_file)}))

        return context


class LimitLLMCalls(Callback):
    def __init__(self, max_llm_calls: int) -> None:
        self.max_llm_calls = max_llm_calls

    def before_llm_call(self, context: Context, *args, **kwargs) -> Context:
        if "n_llm_calls" not in context.shared:
            context.shared["n_llm_calls"] = 0

        context.shared["n_llm_calls"] += 1

        if context.shared["n_llm_calls"] > self.max_llm_calls:
            raise RuntimeError("Reached limit of LLM Calls")

        return context


class LimitToolExecutions(Callback):
    def __init__(self, max_tool_executions: int) -> None:
        self.max_tool_executions = max_tool_executions

    def before_tool_execution(self, context: Context, *args, **kwargs) -> Context:
        if "n_tool_executions" not in context.shared:
            context.shared["n_tool_executions"] = 0

        context.shared["n_tool_executions"] += 1

        if context.shared["n_tool_executions"] > self.max_tool_executions:
            raise RuntimeError("Reached limit of Tool Executions")

        return context


# Test helpers.


class Spy(Callback):
    """Keeps a copy of ``Context.shared`` at the end of each agent's run."""

    def __init__(self) -> None:
        self.shared: list[dict[str, Any]] = []
        self.shared_ids: list[int] = []

    def after_agent_invocation(self, context: Context, *args: Any, **kwargs: Any) -> Context:
        self.shared.append(copy.deepcopy(context.shared))
        self.shared_ids.append(id(context.shared))
        return context


class Recorder(Callback):
    """Appends ``"<label>:<hook>"`` to ``context.shared["order"]`` in two hooks."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.name = label

    def _add(self, context: Context, hook: str) -> Context:
        context.shared.setdefault("order", []).append(f"{self.label}:{hook}")
        return context

    def before_agent_invocation(self, context: Context, *args: Any, **kwargs: Any) -> Context:
        return self._add(context, "before_agent_invocation")

    def before_llm_call(self, context: Context, *args: Any, **kwargs: Any) -> Context:
        return self._add(context, "before_llm_call")


def search_web(query: str) -> str:
    """Search the web for ``query``."""
    return f"results for {query}"


def visit_webpage(url: str) -> str:
    """Read the page at ``url``."""
    return f"contents of {url}"


def search(query: str) -> types.FunctionCall:
    return types.FunctionCall(name="search_web", args={"query": query})


def visit(url: str) -> types.FunctionCall:
    return types.FunctionCall(name="visit_webpage", args={"url": url})


def researcher(script: list[Any], callbacks: list[Callback] | None = None, **kw: Any) -> Agent:
    """The documentation's agent: instructions plus search_web and visit_webpage."""
    return Agent(
        name=kw.pop("name", "researcher"),
        model=ScriptedLlm(responses=script),
        instruction="Use the tools to find an answer",
        tools=[search_web, visit_webpage],
        callbacks=callbacks,
        **kw,
    )


class Harness:
    """A runner on an in-memory session service, with one session."""

    def __init__(self, agent: BaseAgent, switchboard: Switchboard | None = None) -> None:
        self.service = InMemorySessionService()
        self.session_id = self.service.create_session(app_name="docs", user_id="u1").id
        self.runner = Runner(
            agent=agent, app_name="docs", session_service=self.service, switchboard=switchboard
        )

    async def run(self, text: str = "Who won the 2022 World Cup?") -> list[Event]:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        return [
            e
            async for e in self.runner.run_async(
                user_id="u1", session_id=self.session_id, new_message=message
            )
        ]


async def run(agent: BaseAgent, text: str = "Who won the 2022 World Cup?") -> list[Event]:
    return await Harness(agent).run(text)


def named(spans: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [s for s in spans.get_finished_spans() if s.name == name]


def attr(span: ReadableSpan, key: str) -> Any:
    return (span.attributes or {}).get(key)


def callback_spans(spans: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [s for s in spans.get_finished_spans() if attr(s, "agentdash.callback.name") == name]


# Managing state: CountSearchWeb and LimitSearchWeb.


async def test_count_search_web_counts_only_search_web_calls(
    spans: InMemorySpanExporter,
) -> None:
    spy = Spy()
    agent = researcher(
        [search("world cup 2022"), visit("https://fifa.com"), search("final score"), "Argentina"],
        callbacks=[CountSearchWeb(), LimitSearchWeb(max_calls=3), spy],
    )
    events = await run(agent)
    assert events[-1].text == "Argentina"
    assert spy.shared == [{"search_web_count": 2}]


async def test_limit_search_web_stops_the_run_with_the_trace_id(
    spans: InMemorySpanExporter,
) -> None:
    script = [search("a"), visit("https://x.org"), search("b"), search("c"), search("d")]
    script += [search("e"), "never reached"]
    agent = researcher(script, callbacks=[CountSearchWeb(), LimitSearchWeb(max_calls=3)])

    with pytest.raises(CallbackError) as caught:
        await run(agent)

    error = caught.value
    assert (error.callback_name, error.hook, error.agent_name) == (
        "LimitSearchWeb",
        "before_tool_execution",
        "researcher",
    )
    assert isinstance(error.__cause__, RuntimeError)
    assert str(error.__cause__) == "Reached limit of `search_web` calls."
    finished = spans.get_finished_spans()
    trace_ids = {format(s.context.trace_id, "032x") for s in finished}
    assert trace_ids == {error.trace_id}
    assert error.trace_id in str(error)

    # Four searches ran; the fifth was stopped before its tool ran.
    assert len(named(spans, "execute_tool search_web")) == 5
    assert len(callback_spans(spans, "CountSearchWeb")) == 5  # 4 searches + 1 visit
    (limit,) = [
        s for s in callback_spans(spans, "LimitSearchWeb") if s.status.status_code.name == "ERROR"
    ]
    assert attr(limit, "agentdash.callback.outcome") == "raised"
    assert "Reached limit of `search_web` calls." in attr(limit, "agentdash.error.message")
    by_id = {s.context.span_id: s for s in finished}
    chain = []
    span: ReadableSpan | None = limit
    while span is not None:
        chain.append((span.name, span.status.status_code))
        span = by_id[span.parent.span_id] if span.parent else None
    assert chain == [
        ("callback LimitSearchWeb", StatusCode.ERROR),
        ("execute_tool search_web", StatusCode.ERROR),
        ("invoke_agent researcher", StatusCode.ERROR),
        ("invocation docs", StatusCode.ERROR),
    ]


async def test_the_documented_limit_fails_on_the_first_tool(spans: InMemorySpanExporter) -> None:
    # The doc bug, shown: with the documented LimitSearchWeb the recommended order
    # [CountSearchWeb, LimitSearchWeb] stops at the very first tool call.
    agent = researcher(
        [search("a"), "done"], callbacks=[CountSearchWeb(), DocumentedLimitSearchWeb(3)]
    )
    with pytest.raises(CallbackError) as caught:
        await run(agent)
    assert isinstance(caught.value.__cause__, KeyError)
    assert caught.value.callback_name == "DocumentedLimitSearchWeb"


# Limiting steps.


async def test_limit_llm_calls(spans: InMemorySpanExporter) -> None:
    agent = researcher([search("a"), search("b"), "done"], callbacks=[LimitLLMCalls(2)])
    with pytest.raises(CallbackError) as caught:
        await run(agent)
    assert (caught.value.callback_name, caught.value.hook) == ("LimitLLMCalls", "before_llm_call")
    assert str(caught.value.__cause__) == "Reached limit of LLM Calls"
    models = named(spans, "generate_content scripted")
    assert [m.status.status_code for m in models] == [StatusCode.UNSET] * 2 + [StatusCode.ERROR]


async def test_limit_llm_calls_lets_a_short_run_finish(spans: InMemorySpanExporter) -> None:
    spy = Spy()
    events = await run(researcher([search("a"), "done"], callbacks=[LimitLLMCalls(2), spy]))
    assert events[-1].text == "done"
    assert spy.shared == [{"n_llm_calls": 2}]


async def test_limit_tool_executions(spans: InMemorySpanExporter) -> None:
    script = [search("a"), visit("https://x.org"), search("b"), "done"]
    agent = researcher(script, callbacks=[LimitToolExecutions(2)])
    with pytest.raises(CallbackError) as caught:
        await run(agent)
    assert caught.value.hook == "before_tool_execution"
    assert str(caught.value.__cause__) == "Reached limit of Tool Executions"
    tools = [
        (s.name, s.status.status_code)
        for s in spans.get_finished_spans()
        if attr(s, "agentdash.span.kind") == "tool"
    ]
    assert tools == [
        ("execute_tool search_web", StatusCode.UNSET),
        ("execute_tool visit_webpage", StatusCode.UNSET),
        ("execute_tool search_web", StatusCode.ERROR),
    ]


# Offloading sensitive information.


async def test_sensitive_data_offloader_replaces_the_input_messages_with_a_ref(
    spans: InMemorySpanExporter, tmp_path: Path
) -> None:
    secret = "My SSN is 078-05-1120"
    offloader = SensitiveDataOffloader(str(tmp_path / "offload"))
    events = await run(researcher(["Noted."], callbacks=[offloader]), secret)
    assert events[-1].text == "Noted."

    (model,) = named(spans, "generate_content scripted")
    ref = json.loads(attr(model, GenAI.INPUT_MESSAGES))
    path = Path(ref["ref"])
    assert ref == {"ref": str(tmp_path / "offload" / f"{model.context.trace_id}.txt")}
    assert json.loads(path.read_text()) == [
        {"role": "user", "parts": [{"type": "text", "content": secret}]}
    ]
    exported = [str(v) for s in spans.get_finished_spans() for v in (s.attributes or {}).values()]
    assert not [v for v in exported if "078-05-1120" in v]


# Order, defaults and the callback contract.


async def test_callbacks_run_in_list_order(spans: InMemorySpanExporter) -> None:
    spy = Spy()
    await run(researcher(["ok"], callbacks=[Recorder("first"), Recorder("second"), spy]))
    await run(researcher(["ok"], callbacks=[Recorder("second"), Recorder("first"), spy]))
    assert [s["order"] for s in spy.shared] == [
        [
            "first:before_agent_invocation",
            "second:before_agent_invocation",
            "first:before_llm_call",
            "second:before_llm_call",
        ],
        [
            "second:before_agent_invocation",
            "first:before_agent_invocation",
            "second:before_llm_call",
            "first:before_llm_call",
        ],
    ]


async def test_callbacks_empty_list_disables_the_defaults(spans: InMemorySpanExporter) -> None:
    agent = researcher([search("a"), "done"], callbacks=[])
    assert agent.callbacks == []
    await run(agent)
    finished = spans.get_finished_spans()
    assert not callback_spans(spans, "StepLogger")
    assert not [s.name for s in finished if attr(s, SUMMARY) is not None]
    # The span skeleton is still there.
    assert {attr(s, "agentdash.span.kind") for s in finished} == {
        "invocation",
        "agent",
        "model",
        "tool",
    }


async def test_callbacks_not_passed_keeps_the_defaults(spans: InMemorySpanExporter) -> None:
    agent = researcher([search("a"), "done"])
    assert [type(c) for c in agent.callbacks] == [StepLogger]
    await run(agent)
    assert callback_spans(spans, "StepLogger")
    summaries = {s.name: attr(s, SUMMARY) for s in spans.get_finished_spans() if attr(s, SUMMARY)}
    assert "results for a" in summaries["execute_tool search_web"]
    assert "done" in summaries["generate_content scripted"]


async def test_custom_callbacks_before_the_defaults(spans: InMemorySpanExporter) -> None:
    spy = Spy()
    callbacks = [CountSearchWeb(), LimitSearchWeb(max_calls=3), spy, *get_default_callbacks()]
    await run(researcher([search("a"), "done"], callbacks=callbacks))
    assert spy.shared == [{"search_web_count": 1}]
    (tool,) = named(spans, "execute_tool search_web")
    after_tool = [
        attr(s, "agentdash.callback.name")
        for s in spans.get_finished_spans()
        if s.parent is not None
        and s.parent.span_id == tool.context.span_id
        and attr(s, "agentdash.callback.hook") == "after_tool_execution"
    ]
    assert after_tool == ["CountSearchWeb", "StepLogger"]
    assert "results for a" in attr(tool, SUMMARY)


class ReturnsNone(Callback):
    def before_agent_invocation(self, context: Context, *args: Any, **kwargs: Any) -> None:
        context.shared["seen"] = True


class ReplacesContext(Callback):
    def before_llm_call(self, context: Context, *args: Any, **kwargs: Any) -> Context:
        return Context(shared={"replaced": True, **context.shared})


class ReturnsJunk(Callback):
    def before_llm_call(self, context: Context, *args: Any, **kwargs: Any) -> Any:
        return "not a context"


async def test_a_hook_returning_none_keeps_the_context(spans: InMemorySpanExporter) -> None:
    spy = Spy()
    await run(researcher(["ok"], callbacks=[ReturnsNone(), spy]))
    assert spy.shared == [{"seen": True}]


async def test_a_returned_context_replaces_it(spans: InMemorySpanExporter) -> None:
    spy = Spy()
    await run(researcher(["ok"], callbacks=[ReturnsNone(), ReplacesContext(), spy]))
    assert spy.shared == [{"replaced": True, "seen": True}]


async def test_a_hook_returning_something_else_stops_the_run(
    spans: InMemorySpanExporter,
) -> None:
    with pytest.raises(CallbackError, match="hooks return the Context") as caught:
        await run(researcher(["ok"], callbacks=[ReturnsJunk()]))
    assert isinstance(caught.value.__cause__, TypeError)


class AsyncCounter(Callback):
    async def before_llm_call(self, context: Context, *args: Any, **kwargs: Any) -> Context:
        await asyncio.sleep(0)
        context.shared["async_calls"] = context.shared.get("async_calls", 0) + 1
        return context

    async def after_tool_execution(self, context: Context, *args: Any, **kwargs: Any) -> None:
        await asyncio.sleep(0)
        context.current_span.set_attribute("test.async_note", "after tool")


async def test_async_hooks(spans: InMemorySpanExporter) -> None:
    spy = Spy()
    await run(researcher([search("a"), "done"], callbacks=[AsyncCounter(), spy]))
    assert spy.shared == [{"async_calls": 2}]
    (tool,) = named(spans, "execute_tool search_web")
    assert attr(tool, "test.async_note") == "after tool"


class SpanProbe(Callback):
    """Reads ``current_span`` before and after an await during which the other branch runs
    the same hook (both wait until both have arrived)."""

    def __init__(self, branches: int) -> None:
        self.branches = branches
        self.arrived = 0
        self.all_arrived = asyncio.Event()
        self.seen: list[tuple[str, str, str]] = []

    async def before_llm_call(self, context: Context, *args: Any, **kwargs: Any) -> Context:
        before = context.current_span.attributes[GenAI.AGENT_NAME]
        self.arrived += 1
        if self.arrived == self.branches:
            self.all_arrived.set()
        await asyncio.wait_for(self.all_arrived.wait(), timeout=5)
        after = context.current_span.attributes[GenAI.AGENT_NAME]
        self.seen.append((context.agent_name, before, after))
        return context


async def test_async_hooks_in_parallel_branches_keep_their_own_span(
    spans: InMemorySpanExporter,
) -> None:
    probe = SpanProbe(branches=2)
    left = researcher(["L"], callbacks=[probe], name="left")
    right = researcher(["R"], callbacks=[probe], name="right")
    await run(ParallelAgent(name="fanout", sub_agents=[left, right], callbacks=[]))
    assert sorted(probe.seen) == [("left", "left", "left"), ("right", "right", "right")]


# Context.shared: one dict per invocation.


async def test_shared_is_one_dict_per_invocation(spans: InMemorySpanExporter) -> None:
    spy = Spy()
    first = researcher(["draft"], callbacks=[Recorder("drafter"), spy], name="drafter")
    second = researcher(["review"], callbacks=[Recorder("reviewer"), spy], name="reviewer")
    harness = Harness(SequentialAgent(name="pipeline", sub_agents=[first, second], callbacks=[]))

    await harness.run("first message")
    # Both agents of the invocation wrote into the same dict.
    assert spy.shared_ids[0] == spy.shared_ids[1]
    assert spy.shared[1]["order"] == [
        "drafter:before_agent_invocation",
        "drafter:before_llm_call",
        "reviewer:before_agent_invocation",
        "reviewer:before_llm_call",
    ]

    first.model.responses.append("draft 2")
    second.model.responses.append("review 2")
    await harness.run("second message")
    # A new invocation starts with an empty dict.
    assert spy.shared[2]["order"] == [
        "drafter:before_agent_invocation",
        "drafter:before_llm_call",
    ]


# Operators switch any-agent callbacks by class name.


async def test_switchboard_disables_a_callback_by_class_name(
    spans: InMemorySpanExporter,
) -> None:
    switchboard = InMemorySwitchboard()
    switchboard.disable("CountSearchWeb")
    spy = Spy()
    agent = researcher([search("a"), "done"], callbacks=[CountSearchWeb(), spy])
    await Harness(agent, switchboard).run()
    assert spy.shared == [{}]
    (count,) = callback_spans(spans, "CountSearchWeb")
    assert attr(count, "agentdash.callback.outcome") == "disabled"
    assert attr(count, "agentdash.callback.style") == "any-agent"

    switchboard.enable("CountSearchWeb")
    spans.clear()
    agent = researcher([search("a"), "done"], callbacks=[CountSearchWeb(), spy])
    await Harness(agent, switchboard).run()
    assert spy.shared[-1] == {"search_web_count": 1}
    (count,) = callback_spans(spans, "CountSearchWeb")
    assert attr(count, "agentdash.callback.outcome") == "passed"


async def test_switching_off_the_default_callbacks_for_a_session_keeps_the_spans(
    spans: InMemorySpanExporter,
) -> None:
    switchboard = InMemorySwitchboard()
    harness = Harness(researcher([search("a"), "done"]), switchboard)
    switchboard.disable("StepLogger", session_id=harness.session_id)
    await harness.run()
    loggers = callback_spans(spans, "StepLogger")
    assert loggers
    assert {attr(s, "agentdash.callback.outcome") for s in loggers} == {"disabled"}
    assert not [s for s in spans.get_finished_spans() if attr(s, SUMMARY)]
    assert named(spans, "execute_tool search_web")
