"""What every agent is: a name, sub-agents, and the agent-level callbacks around its run."""

from __future__ import annotations

import abc
import contextlib
import typing
from collections.abc import AsyncGenerator, Iterator
from contextlib import aclosing
from typing import Any

from google.genai import types

from runtime.agents._callbacks import (
    NamedCallback,
    normalize,
    run_adk_callbacks,
    run_any_agent_hook,
)
from runtime.callbacks.any_agent import Callback
from runtime.callbacks.default_callbacks import get_default_callbacks
from runtime.contexts.callback_context import CallbackContext
from runtime.contexts.invocation_context import InvocationContext
from runtime.events.event import Event
from runtime.events.event_actions import EventActions
from runtime.telemetry.attributes import AgentDash, GenAI, Operation, StepKind
from runtime.telemetry.tracing import LiveSpan, iterate_in_span, open_span


class BaseAgent(abc.ABC):
    """An agent: subclass and implement ``_run_async_impl(ctx)`` yielding events.

    Constructor arguments are keyword-only. Extra keyword arguments set fields a subclass
    declares with class annotations (as ADK's pydantic agents do); unknown ones are an error.

    ``before_agent_callback`` / ``after_agent_callback`` (one callable or a list, sync or
    async, called as ``cb(callback_context=...)``): a ``types.Content`` returned by a before
    callback skips the agent's run and is its answer (the after callbacks then do not run); a
    ``Content`` returned by an after callback is added as the agent's last answer.
    ``callbacks`` takes any-agent style :class:`Callback` objects; ``None`` means
    :func:`get_default_callbacks`, ``[]`` means none.
    """

    def __init__(
        self,
        *,
        name: str,
        description: str = "",
        sub_agents: list[BaseAgent] | None = None,
        before_agent_callback: Any = None,
        after_agent_callback: Any = None,
        callbacks: list[Callback] | None = None,
        **fields: Any,
    ) -> None:
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"agent name {name!r} must be a Python identifier")
        if name == "user":
            raise ValueError("'user' is reserved for the end user's messages")
        self.name = name
        self.description = description
        self.parent_agent: BaseAgent | None = None
        self.sub_agents: list[BaseAgent] = list(sub_agents or [])
        seen: set[str] = set()
        for sub in self.sub_agents:
            if not isinstance(sub, BaseAgent):
                raise TypeError(f"sub_agents of {name!r} must be agents, got {sub!r}")
            if sub.parent_agent is not None:
                raise ValueError(
                    f"agent {sub.name!r} already has parent {sub.parent_agent.name!r}; "
                    "an agent can be the sub-agent of one parent only"
                )
            if sub.name in seen:
                raise ValueError(f"two sub-agents of {name!r} are named {sub.name!r}")
            seen.add(sub.name)
            sub.parent_agent = self
        self.before_agent_callback = before_agent_callback
        self.after_agent_callback = after_agent_callback
        self._before_agent: tuple[NamedCallback, ...] = normalize(
            before_agent_callback, "before_agent_callback"
        )
        self._after_agent: tuple[NamedCallback, ...] = normalize(
            after_agent_callback, "after_agent_callback"
        )
        if callbacks is not None and not all(isinstance(c, Callback) for c in callbacks):
            raise TypeError("callbacks= takes a list of runtime.Callback instances")
        self.callbacks: list[Callback] = (
            get_default_callbacks() if callbacks is None else list(callbacks)
        )
        declared = _declared_fields(type(self))
        for key, value in fields.items():
            if key not in declared:
                raise TypeError(f"{type(self).__name__}() got an unexpected argument {key!r}")
            setattr(self, key, value)

    # Tree navigation.

    @property
    def root_agent(self) -> BaseAgent:
        agent = self
        while agent.parent_agent is not None:
            agent = agent.parent_agent
        return agent

    def find_agent(self, name: str) -> BaseAgent | None:
        """This agent or a descendant named ``name``."""
        if self.name == name:
            return self
        return self.find_sub_agent(name)

    def find_sub_agent(self, name: str) -> BaseAgent | None:
        for sub in self.sub_agents:
            found = sub.find_agent(name)
            if found is not None:
                return found
        return None

    def walk(self) -> Iterator[BaseAgent]:
        yield self
        for sub in self.sub_agents:
            yield from sub.walk()

    # Running.

    async def run_async(self, parent_context: InvocationContext) -> AsyncGenerator[Event, None]:
        """Run this agent within ``parent_context``'s invocation, yielding its events."""
        ctx = parent_context.for_agent(self)
        attributes: dict[str, Any] = {
            GenAI.OPERATION_NAME: Operation.INVOKE_AGENT,
            GenAI.AGENT_NAME: self.name,
            GenAI.CONVERSATION_ID: ctx.session.id,
            AgentDash.SPAN_KIND: StepKind.AGENT,
            AgentDash.INVOCATION_ID: ctx.invocation_id,
        }
        if self.description:
            attributes[GenAI.AGENT_DESCRIPTION] = self.description
        if ctx.branch:
            attributes[AgentDash.BRANCH] = ctx.branch
        span = open_span(f"invoke_agent {self.name}", attributes)
        async with aclosing(iterate_in_span(span, self._run_with_callbacks(ctx, span))) as events:
            async for event in events:
                yield event

    async def _run_with_callbacks(
        self, ctx: InvocationContext, span: LiveSpan
    ) -> AsyncGenerator[Event, None]:
        event = await self._before(ctx, span)
        if event is not None:
            yield event
            if event.content is not None or ctx.end_invocation:
                return
        async with aclosing(self._run_async_impl(ctx)) as events:
            async for event in events:
                yield event
        if ctx.end_invocation:
            return
        event = await self._after(ctx, span)
        if event is not None:
            yield event

    async def _before(self, ctx: InvocationContext, span: LiveSpan) -> Event | None:
        cb_ctx = CallbackContext(ctx)
        await run_any_agent_hook(ctx, "before_agent_invocation", self.callbacks, span, agent=self)
        content = await run_adk_callbacks(
            ctx,
            "before_agent",
            self._before_agent,
            types.Content,
            step_span=span,
            callback_context=cb_ctx,
        )
        if content is not None:
            return self._event(ctx, content, cb_ctx.actions)
        if not cb_ctx.actions.is_empty():
            return self._event(ctx, None, cb_ctx.actions)
        return None

    async def _after(self, ctx: InvocationContext, span: LiveSpan) -> Event | None:
        cb_ctx = CallbackContext(ctx)
        await run_any_agent_hook(ctx, "after_agent_invocation", self.callbacks, span, agent=self)
        content = await run_adk_callbacks(
            ctx,
            "after_agent",
            self._after_agent,
            types.Content,
            step_span=span,
            mark=AgentDash.REPLACED_BY,
            callback_context=cb_ctx,
        )
        if content is not None or not cb_ctx.actions.is_empty():
            return self._event(ctx, content, cb_ctx.actions)
        return None

    def _event(
        self, ctx: InvocationContext, content: types.Content | None, actions: EventActions
    ) -> Event:
        if content is not None and content.role is None:
            content = content.model_copy(update={"role": "model"})
        return Event(
            invocation_id=ctx.invocation_id,
            author=self.name,
            branch=ctx.branch,
            content=content,
            actions=actions,
        )

    @abc.abstractmethod
    def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        """The agent's own logic, implemented by every agent class as
        ``async def _run_async_impl(self, ctx): ... yield event``."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def _declared_fields(cls: type) -> set[str]:
    """The fields a subclass declares with class annotations (a ``ClassVar`` is no field)."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if klass is BaseAgent or klass is object:
            break
        for name, hint in getattr(klass, "__annotations__", {}).items():
            if not _is_class_var(hint):
                names.add(name)
    with contextlib.suppress(Exception):  # unresolvable forward references
        hints = typing.get_type_hints(cls)
        names.update(name for name, hint in hints.items() if not _is_class_var(hint))
    return names


def _is_class_var(hint: Any) -> bool:
    if isinstance(hint, str):  # postponed (``from __future__ import annotations``)
        return hint.startswith(("ClassVar", "typing.ClassVar"))
    return typing.get_origin(hint) is typing.ClassVar or hint is typing.ClassVar
