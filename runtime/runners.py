"""Runs an agent for one user message and persists what happens."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import queue
import threading
from collections.abc import AsyncGenerator, Callable, Generator
from contextlib import aclosing
from typing import Any

from google.genai import types

from runtime.agents.base_agent import BaseAgent
from runtime.agents.llm_agent import LlmAgent
from runtime.artifacts import BaseArtifactService
from runtime.callbacks.any_agent import Context
from runtime.callbacks.switchboard import AllEnabled, Switchboard
from runtime.contexts.invocation_context import (
    DEFAULT_SERVICE_IDENTITY,
    InvocationContext,
    new_invocation_id,
)
from runtime.contexts.run_config import RunConfig
from runtime.debug.breakpoints import BreakpointSource
from runtime.events.event import Event
from runtime.events.event_actions import EventActions
from runtime.memory import BaseMemoryService
from runtime.sessions.base_session_service import BaseSessionService, SessionNotFoundError
from runtime.sessions.session import Session
from runtime.telemetry.attributes import AgentDash, GenAI, StepKind
from runtime.telemetry.tracing import iterate_in_span, open_span, trace_id_hex
from runtime.tools.auth import REQUEST_CREDENTIAL_FUNCTION, AuthConfig

_END = object()
_MESSAGE_TYPE_ERROR = (
    "new_message must be a google.genai types.Content, e.g. "
    "types.Content(role='user', parts=[types.Part(text='...')]); got {}"
)


class Runner:
    """Runs ``agent`` in the sessions of ``app_name``.

    ``switchboard`` is asked before every callback whether it may run (default: all may).
    ``service_identity`` is the agent's own identity: tools acting as the agent act as it
    (``ToolContext.agent_principal``); tools acting as the user act as the session's owner.
    ``breakpoints`` says where runs pause for a person (runtime.debug.breakpoints), read at
    every step.
    Every event except partial chunks is appended to the session service as it is produced,
    so a crash loses nothing already yielded.
    """

    def __init__(
        self,
        *,
        agent: BaseAgent,
        app_name: str,
        session_service: BaseSessionService,
        artifact_service: BaseArtifactService | None = None,
        memory_service: BaseMemoryService | None = None,
        switchboard: Switchboard | None = None,
        service_identity: str = DEFAULT_SERVICE_IDENTITY,
        breakpoints: BreakpointSource | None = None,
    ) -> None:
        if not isinstance(service_identity, str) or not service_identity.strip():
            raise ValueError(
                f"service_identity must be a non-empty string (the id tools acting as the "
                f"agent act as), not {service_identity!r}"
            )
        self.agent = agent
        self.app_name = app_name
        self.session_service = session_service
        self.artifact_service = artifact_service
        self.memory_service = memory_service
        self.switchboard: Switchboard = switchboard or AllEnabled()
        self.service_identity = service_identity
        self.breakpoints = breakpoints

    async def run_async(
        self,
        *,
        user_id: str,
        session_id: str,
        new_message: types.Content | None = None,
        state_delta: dict[str, Any] | None = None,
        run_config: RunConfig | None = None,
        invocation_id: str | None = None,
    ) -> AsyncGenerator[Event, None]:
        """Append ``new_message`` (with ``state_delta``) as the user's event, run the agent
        that should answer it, and yield its events.

        Raises :class:`SessionNotFoundError` for an unknown session. An exception from the run
        propagates with a note naming the invocation and trace.
        """
        if new_message is not None and not isinstance(new_message, types.Content):
            raise TypeError(_MESSAGE_TYPE_ERROR.format(type(new_message).__name__))
        session = await self.session_service.aget_session(
            app_name=self.app_name, user_id=user_id, session_id=session_id
        )
        if session is None:
            raise SessionNotFoundError(
                f"session {session_id!r} of user {user_id!r} in app {self.app_name!r} not found"
            )
        ictx = InvocationContext(
            invocation_id=invocation_id or new_invocation_id(),
            agent=self.agent,
            session=session,
            session_service=self.session_service,
            artifact_service=self.artifact_service,
            memory_service=self.memory_service,
            switchboard=self.switchboard,
            run_config=run_config or RunConfig(),
            user_content=new_message,
            service_identity=self.service_identity,
            breakpoints=self.breakpoints,
            nested_run=self._run_nested,
        )
        attributes = {
            GenAI.CONVERSATION_ID: session.id,
            AgentDash.INVOCATION_ID: ictx.invocation_id,
            AgentDash.APP_NAME: self.app_name,
            AgentDash.USER_ID: user_id,
            AgentDash.SPAN_KIND: StepKind.INVOCATION,
        }
        span = open_span(f"invocation {self.app_name}", attributes)
        ictx.trace_id = trace_id_hex(span)
        ictx.any_agent_context = Context(invocation_id=ictx.invocation_id, trace_id=ictx.trace_id)
        steps = iterate_in_span(span, self._run(ictx, new_message, state_delta))
        try:
            async with aclosing(steps) as events:
                async for event in events:
                    yield event
        except Exception as exc:
            exc.add_note(f"invocation {ictx.invocation_id}, trace {ictx.trace_id}")
            raise

    def _run_nested(
        self,
        *,
        agent: BaseAgent,
        app_name: str,
        session_service: BaseSessionService,
        user_id: str,
        session_id: str,
        new_message: types.Content,
        run_config: RunConfig,
    ) -> AsyncGenerator[Event, None]:
        """Run ``agent`` in a session of ``session_service`` with this runner's artifact and
        memory services, switchboard and service identity (no breakpoints): how an
        ``AgentTool`` runs its agent (:class:`~runtime.contexts.NestedRun`)."""
        runner = Runner(
            agent=agent,
            app_name=app_name,
            session_service=session_service,
            artifact_service=self.artifact_service,
            memory_service=self.memory_service,
            switchboard=self.switchboard,
            service_identity=self.service_identity,
        )
        return runner.run_async(
            user_id=user_id, session_id=session_id, new_message=new_message, run_config=run_config
        )

    async def _run(
        self,
        ictx: InvocationContext,
        new_message: types.Content | None,
        state_delta: dict[str, Any] | None,
    ) -> AsyncGenerator[Event, None]:
        session = ictx.session
        if new_message is not None:
            await self._append_user_message(ictx, new_message, state_delta)
        agent = self._find_agent_to_run(session, new_message)
        async with aclosing(agent.run_async(ictx)) as events:
            async for event in events:
                if not event.partial:
                    event = await self.session_service.aappend_event(session, event)
                yield event

    async def _append_user_message(
        self, ictx: InvocationContext, message: types.Content, state_delta: dict[str, Any] | None
    ) -> None:
        if message.role is None:
            message = message.model_copy(update={"role": "user"})
        for part in message.parts or []:
            fr = part.function_response
            if fr is not None and fr.name == REQUEST_CREDENTIAL_FUNCTION and fr.response:
                config = AuthConfig.model_validate(fr.response.get("auth_config", fr.response))
                ictx.session.state[config.state_key] = config.exchanged_auth_credential
        event = Event(
            invocation_id=ictx.invocation_id,
            author="user",
            content=message,
            actions=EventActions(state_delta=dict(state_delta or {})),
        )
        await self.session_service.aappend_event(ictx.session, event)

    def _find_agent_to_run(self, session: Session, message: types.Content | None) -> BaseAgent:
        """Who answers: the agent whose function call this message answers; else the agent
        that spoke last, if control can move freely up to the root from it; else the root."""
        root = self.agent
        answered = {
            p.function_response.id
            for p in (message.parts or [] if message else [])
            if p.function_response and p.function_response.id
        }
        if answered:
            for event in reversed(session.events):
                if any(fc.id in answered for fc in event.get_function_calls()):
                    found = root.find_agent(event.author)
                    if found is not None:
                        return found
        for event in reversed(session.events):
            if event.author == root.name:
                return root
            found = root.find_sub_agent(event.author)
            if found is not None and _transferable(found):
                return found
        return root

    def run(
        self,
        *,
        user_id: str,
        session_id: str,
        new_message: types.Content | None = None,
        state_delta: dict[str, Any] | None = None,
        run_config: RunConfig | None = None,
    ) -> Generator[Event, None, None]:
        """Synchronous twin of :meth:`run_async` for scripts: the run happens on an event loop
        in a background thread (in a copy of the caller's context, so spans nest under the
        caller's) and events are handed over as they come. Closing the generator early
        cancels the run."""
        if new_message is not None and not isinstance(new_message, types.Content):
            raise TypeError(_MESSAGE_TYPE_ERROR.format(type(new_message).__name__))
        yield from _in_a_thread(
            lambda: self.run_async(
                user_id=user_id,
                session_id=session_id,
                new_message=new_message,
                state_delta=state_delta,
                run_config=run_config,
            )
        )


class InMemoryRunner(Runner):
    """A runner with in-memory session, artifact and memory services (for scripts and tests).
    Other keyword arguments (``switchboard``, ``service_identity``) go to :class:`Runner`."""

    def __init__(self, agent: BaseAgent, *, app_name: str = "InMemoryRunner", **kwargs: Any):
        from runtime.artifacts import InMemoryArtifactService
        from runtime.memory import InMemoryMemoryService
        from runtime.sessions import InMemorySessionService

        super().__init__(
            agent=agent,
            app_name=app_name,
            session_service=kwargs.pop("session_service", None) or InMemorySessionService(),
            artifact_service=kwargs.pop("artifact_service", None) or InMemoryArtifactService(),
            memory_service=kwargs.pop("memory_service", None) or InMemoryMemoryService(),
            **kwargs,
        )


def _transferable(agent: BaseAgent) -> bool:
    current: BaseAgent | None = agent
    while current is not None:
        if not isinstance(current, LlmAgent) or current.disallow_transfer_to_parent:
            return False
        current = current.parent_agent
    return True


def _in_a_thread(
    events_of: Callable[[], AsyncGenerator[Event, None]],
) -> Generator[Event, None, None]:
    """The events of ``events_of()``, run on an event loop in a background thread (in a copy
    of the caller's context, so spans nest under the caller's), handed over as they come;
    closing the generator early cancels the run."""
    handoff: queue.Queue[object] = queue.Queue()
    started = threading.Event()
    control: dict[str, Any] = {}

    async def drive() -> None:
        control["loop"] = asyncio.get_running_loop()
        control["task"] = asyncio.current_task()
        started.set()
        try:
            async with aclosing(events_of()) as events:
                async for event in events:
                    handoff.put(event)
        except asyncio.CancelledError:
            pass
        except BaseException as exc:
            handoff.put(exc)
        finally:
            handoff.put(_END)

    context = contextvars.copy_context()
    thread = threading.Thread(
        target=context.run, args=(asyncio.run, drive()), daemon=True, name="runner.run"
    )
    thread.start()
    finished = False
    try:
        while True:
            item = handoff.get()
            if item is _END:
                finished = True
                break
            if isinstance(item, BaseException):
                finished = True
                raise item
            assert isinstance(item, Event)
            yield item
    finally:
        if not finished:
            started.wait()
            with contextlib.suppress(RuntimeError):  # the loop may have closed already
                control["loop"].call_soon_threadsafe(control["task"].cancel)
        thread.join()
