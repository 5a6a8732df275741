"""The agent that thinks with a model and acts with tools."""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from google.genai import types
from pydantic import BaseModel

from runtime.agents import _code_execution, _resume
from runtime.agents._callbacks import NamedCallback, normalize
from runtime.agents._llm_flow import call_model
from runtime.agents._tool_calls import (
    auth_request_event,
    call_tools,
    confirmation_request_event,
    model_pause_event,
)
from runtime.agents.base_agent import BaseAgent
from runtime.agents.instructions import InstructionView, inject_session_state
from runtime.agents.request_processors import REQUEST_PROCESSORS, RequestProcessor
from runtime.callbacks.any_agent import Callback
from runtime.code_executors.base_code_executor import BaseCodeExecutor
from runtime.contexts.invocation_context import InvocationContext
from runtime.contexts.readonly_context import ReadonlyContext
from runtime.debug import breakpoints
from runtime.errors import AgentNotFoundError, CallbackError
from runtime.events.event import Event
from runtime.models import registry
from runtime.models.base_llm import BaseLlm
from runtime.models.llm_request import LlmRequest
from runtime.tools.base_tool import BaseTool
from runtime.tools.function_tool import FunctionTool

InstructionProvider = Callable[[ReadonlyContext], Any]


class LlmAgent(BaseAgent):
    """An agent driven by a model, with ADK's arguments and callback contract.

    The loop: build a request (instruction, history, tools) → call the model → run the function
    calls it asked for → repeat until the model answers without calling a tool, a tool result
    skips summarization, a long-running tool starts, or control is transferred.

    Callback slots (one callable or a list, sync or async; first non-``None`` return wins):
    ``before_model_callback(callback_context, llm_request)`` → ``LlmResponse`` skips the call;
    ``after_model_callback(callback_context, llm_response)`` → ``LlmResponse`` replaces it;
    ``before_tool_callback(tool, args, tool_context)`` → ``dict`` skips the tool and is its
    result; ``after_tool_callback(tool, args, tool_context, tool_response)`` → ``dict``
    replaces the result; ``on_model_error_callback(callback_context, llm_request, error)`` →
    ``LlmResponse`` and ``on_tool_error_callback(tool, args, tool_context, error)`` → ``dict``
    recover from a failure instead of raising it.

    The request is built by :attr:`request_processors` (runtime/agents/request_processors.py),
    as ADK's flows build theirs: a subclass adds a step by extending the tuple.
    """

    request_processors: ClassVar[tuple[RequestProcessor, ...]] = REQUEST_PROCESSORS

    def __init__(
        self,
        *,
        name: str,
        model: str | BaseLlm = "",
        instruction: str | InstructionProvider = "",
        description: str = "",
        tools: list[Any] | None = None,
        sub_agents: list[BaseAgent] | None = None,
        output_key: str | None = None,
        output_schema: type[BaseModel] | None = None,
        generate_content_config: types.GenerateContentConfig | None = None,
        include_contents: Literal["default", "none"] = "default",
        disallow_transfer_to_parent: bool = False,
        disallow_transfer_to_peers: bool = False,
        before_agent_callback: Any = None,
        after_agent_callback: Any = None,
        before_model_callback: Any = None,
        after_model_callback: Any = None,
        before_tool_callback: Any = None,
        after_tool_callback: Any = None,
        on_model_error_callback: Any = None,
        on_tool_error_callback: Any = None,
        callbacks: list[Callback] | None = None,
        code_executor: BaseCodeExecutor | None = None,
        **fields: Any,
    ) -> None:
        super().__init__(
            name=name,
            description=description,
            sub_agents=sub_agents,
            before_agent_callback=before_agent_callback,
            after_agent_callback=after_agent_callback,
            callbacks=callbacks,
            **fields,
        )
        _check_arguments(name, model, generate_content_config, include_contents, code_executor)
        self.model = model
        self.instruction = instruction
        self.tools: list[BaseTool] = [_as_tool(t) for t in tools or []]
        self.code_executor = code_executor
        self.output_key = output_key
        self.output_schema = output_schema
        self.generate_content_config = generate_content_config
        self.include_contents = include_contents
        self.disallow_transfer_to_parent = disallow_transfer_to_parent
        self.disallow_transfer_to_peers = disallow_transfer_to_peers
        self._set_callbacks(
            before_model_callback=before_model_callback,
            after_model_callback=after_model_callback,
            before_tool_callback=before_tool_callback,
            after_tool_callback=after_tool_callback,
            on_model_error_callback=on_model_error_callback,
            on_tool_error_callback=on_tool_error_callback,
        )
        self._llm: BaseLlm | None = None
        names = [t.name for t in self.tools]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"agent {name!r} has two tools named {duplicates[0]!r}")

    def _set_callbacks(
        self,
        *,
        before_model_callback: Any,
        after_model_callback: Any,
        before_tool_callback: Any,
        after_tool_callback: Any,
        on_model_error_callback: Any,
        on_tool_error_callback: Any,
    ) -> None:
        """Each model and tool callback slot as given and as called (named callbacks)."""
        self.before_model_callback = before_model_callback
        self.after_model_callback = after_model_callback
        self.before_tool_callback = before_tool_callback
        self.after_tool_callback = after_tool_callback
        self.on_model_error_callback = on_model_error_callback
        self.on_tool_error_callback = on_tool_error_callback
        self._before_model = normalize(before_model_callback, "before_model_callback")
        self._after_model = normalize(after_model_callback, "after_model_callback")
        self._before_tool = normalize(before_tool_callback, "before_tool_callback")
        self._after_tool = normalize(after_tool_callback, "after_tool_callback")
        self._on_model_error = normalize(on_model_error_callback, "on_model_error_callback")
        self._on_tool_error = normalize(on_tool_error_callback, "on_tool_error_callback")

    @property
    def canonical_model(self) -> BaseLlm:
        """This agent's model, or the nearest ancestor's; resolved from a string once."""
        if self._llm is None:
            agent: BaseAgent | None = self
            while agent is not None:
                model = getattr(agent, "model", None)
                if model:
                    self._llm = registry.resolve(model)
                    break
                agent = agent.parent_agent
            else:
                raise ValueError(f"agent {self.name!r} has no model and no ancestor with one")
        return self._llm

    def named_callbacks(self) -> dict[str, tuple[NamedCallback, ...]]:
        """Every ADK-style callback slot and its callbacks (for registries and UIs)."""
        return {
            "before_agent": self._before_agent,
            "after_agent": self._after_agent,
            "before_model": self._before_model,
            "after_model": self._after_model,
            "before_tool": self._before_tool,
            "after_tool": self._after_tool,
            "on_model_error": self._on_model_error,
            "on_tool_error": self._on_tool_error,
        }

    def transfer_targets(self) -> list[BaseAgent]:
        """Agents this one may hand over to: its sub-agents, its parent and its peers."""
        targets = list(self.sub_agents)
        parent = self.parent_agent
        if parent is not None and isinstance(parent, LlmAgent):
            if not self.disallow_transfer_to_parent:
                targets.append(parent)
            if not self.disallow_transfer_to_peers:
                targets.extend(a for a in parent.sub_agents if a is not self)
        return targets

    async def canonical_instruction(self, ctx: InvocationContext) -> str:
        """The instruction text: a string is templated from state; a provider is called with a
        :class:`ReadonlyContext` and its text used as it is (an :class:`InstructionView` it
        returns is templated as a string is)."""
        text, _ = await self.instruction_and_version(ctx)
        return text

    async def instruction_and_version(self, ctx: InvocationContext) -> tuple[str, str]:
        """The instruction text and, when its provider gave an :class:`InstructionView`, its
        version (``""`` otherwise)."""
        if callable(self.instruction):
            given = self.instruction(ReadonlyContext(ctx))
            if inspect.isawaitable(given):
                given = await given
            if isinstance(given, InstructionView):
                text = await inject_session_state(given.template, ReadonlyContext(ctx))
                return text, given.version
            return "" if given is None else str(given), ""
        return await inject_session_state(self.instruction, ReadonlyContext(ctx)), ""

    async def _build_request(self, ctx: InvocationContext) -> LlmRequest:
        """The next model request: :attr:`request_processors`, in order."""
        request = LlmRequest()
        for process in self.request_processors:
            await process(self, ctx, request)
        return request

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        turn = _Turn()
        async with aclosing(_resume.resumed(self, ctx, turn)) as events:
            async for event in events:
                yield event
        if ctx.end_invocation:  # cancelled at a breakpoint
            return
        while not turn.done:
            async with aclosing(self._step(ctx, turn)) as events:
                async for event in events:
                    yield event

    async def _step(self, ctx: InvocationContext, turn: _Turn) -> AsyncGenerator[Event, None]:
        """One model call and what its answer asks for: code run, tools called, a hand-over.
        ``turn.done`` once the turn ends here (an answer, a pause, a hand-over)."""
        turn.done = True  # unless the answer asks for another model call
        paused = await breakpoints.pause_reason(ctx, tool=None)
        if paused is not None:
            yield model_pause_event(self, ctx, paused)
            return
        request = await self._build_request(ctx)
        model_event: Event | None = None
        try:
            async with aclosing(call_model(self, ctx, self.canonical_model, request)) as events:
                async for event in events:
                    if event.partial:
                        yield event
                    else:
                        model_event = event
        except CallbackError as exc:
            if "raised" not in (await breakpoints.current(ctx)).outcomes:
                raise
            why = f"Breakpoint: callback {exc.callback_name} raised; paused before the model call"
            yield model_pause_event(self, ctx, why)
            return
        assert model_event is not None
        executor = self.code_executor
        found = None
        if executor is not None and turn.failed_runs < executor.error_retry_attempts:
            found = _code_execution.code_of(executor, model_event)
        if found is not None and executor is not None and not model_event.get_function_calls():
            model_event, code = found
            yield model_event
            result_event, result = await _code_execution.run_code(self, ctx, executor, code)
            turn.failed_runs = turn.failed_runs + 1 if result.stderr or result.exit_code else 0
            yield result_event
            turn.done = ctx.end_invocation
            return
        if not model_event.get_function_calls():
            self._save_output(model_event)
            yield model_event
            return
        yield model_event
        if not ctx.end_invocation:
            async with aclosing(self._tools_step(ctx, turn, model_event, request)) as events:
                async for event in events:
                    yield event

    async def _tools_step(
        self, ctx: InvocationContext, turn: _Turn, model_event: Event, request: LlmRequest
    ) -> AsyncGenerator[Event, None]:
        """The tool calls of ``model_event``, their requests (a credential, a confirmation)
        and their response; then a hand-over, or another model call (``turn.done`` false)."""
        response_event = await call_tools(self, ctx, model_event, request.tools_dict)
        asked = None
        if response_event is not None:
            asked = auth_request_event(self, ctx, response_event)
            confirm = confirmation_request_event(self, ctx, model_event, response_event)
            for request_event in (asked, confirm):
                if request_event is not None:
                    yield request_event
            asked = asked or confirm
            yield response_event
        # A long-running tool that returned nothing pauses the run, as does a request for
        # a credential or a confirmation; a tool that returned an interim result lets the
        # model say so first (as ADK does).
        if response_event is None or asked is not None or ctx.end_invocation:
            return
        target = response_event.actions.transfer_to_agent
        if target:
            agent = self.root_agent.find_agent(target)
            if agent is None:
                raise AgentNotFoundError(f"agent {target!r} is not in the agent tree")
            async with aclosing(agent.run_async(ctx)) as events:
                async for event in events:
                    yield event
            return
        turn.done = bool(response_event.actions.skip_summarization)

    def _save_output(self, event: Event) -> None:
        if not self.output_key or event.partial or not event.content:
            return
        text = event.text
        if not text.strip():
            return
        value: Any = text
        if self.output_schema is not None:
            try:
                value = self.output_schema.model_validate(json.loads(text)).model_dump(
                    exclude_none=True
                )
            except ValueError as exc:
                raise ValueError(
                    f"agent {self.name!r}: the answer is not a valid "
                    f"{self.output_schema.__name__} for output_key {self.output_key!r}: {exc}"
                ) from exc
        event.actions.state_delta[self.output_key] = value


Agent = LlmAgent


@dataclass
class _Turn:
    """Where an agent's turn is: over (``done``), and the code runs that failed in a row."""

    done: bool = False
    failed_runs: int = 0


def _check_arguments(
    name: str,
    model: Any,
    generate_content_config: types.GenerateContentConfig | None,
    include_contents: str,
    code_executor: Any,
) -> None:
    """Refuse what ADK's constructor refuses, naming the argument."""
    if generate_content_config is not None and (
        generate_content_config.system_instruction or generate_content_config.tools
    ):
        raise ValueError(
            "put the system instruction in instruction= and tools in tools=, "
            "not in generate_content_config"
        )
    if include_contents not in ("default", "none"):
        raise ValueError("include_contents must be 'default' or 'none'")
    if not isinstance(model, str | BaseLlm):
        raise TypeError(f"model of {name!r} must be a model name or a BaseLlm, got {model!r}")
    if code_executor is not None and not isinstance(code_executor, BaseCodeExecutor):
        raise TypeError(f"code_executor of {name!r} must be a BaseCodeExecutor")


def _as_tool(tool: Any) -> BaseTool:
    if isinstance(tool, BaseTool):
        return tool
    if callable(tool):
        return FunctionTool(tool)
    raise TypeError(f"tools= takes tools or functions, got {tool!r}")
