"""Everything one invocation's agents, callbacks and tools share."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

from google.genai import types

from runtime.callbacks.any_agent import Context
from runtime.callbacks.switchboard import AllEnabled, Switchboard
from runtime.contexts.run_config import RunConfig
from runtime.errors import LlmCallsLimitExceededError
from runtime.sessions.session import Session
from runtime.telemetry.attributes import CONTENT_CAPTURE

if TYPE_CHECKING:
    from runtime.agents.base_agent import BaseAgent
    from runtime.artifacts import BaseArtifactService
    from runtime.debug.breakpoints import BreakpointSource
    from runtime.events.event import Event
    from runtime.memory import BaseMemoryService
    from runtime.sessions.base_session_service import BaseSessionService

DEFAULT_SERVICE_IDENTITY: Final = "agentdash-agent"
"""The agent principal's id when the runner is given none (``runtime.tools.identity``)."""


def new_invocation_id() -> str:
    return "e-" + uuid.uuid4().hex


class NestedRun(Protocol):
    """Runs ``agent`` on ``new_message`` in session ``session_id`` of ``session_service``
    (the app ``app_name``, the invocation's user) as the invocation's runner runs agents — its
    artifact and memory services, switchboard and service identity — and yields the events.
    The ``Runner`` gives its own; an ``AgentTool`` runs its agent with it, so the tools never
    import the runner above them."""

    def __call__(
        self,
        *,
        agent: BaseAgent,
        app_name: str,
        session_service: BaseSessionService,
        user_id: str,
        session_id: str,
        new_message: types.Content,
        run_config: RunConfig,
    ) -> AsyncGenerator[Event, None]: ...


@dataclass
class _Counters:
    llm_calls: int = 0


@dataclass
class InvocationContext:
    """The invocation's shared state. Agents get a copy naming themselves (``for_agent``);
    the session, services, switchboard, counters and any-agent ``Context`` are shared.
    ``service_identity`` is the id tools acting as the agent act as (``Runner``'s)."""

    invocation_id: str
    agent: BaseAgent
    session: Session
    session_service: BaseSessionService
    artifact_service: BaseArtifactService | None = None
    memory_service: BaseMemoryService | None = None
    switchboard: Switchboard = field(default_factory=AllEnabled)
    run_config: RunConfig = field(default_factory=RunConfig)
    user_content: types.Content | None = None
    branch: str | None = None
    end_invocation_flag: list[bool] = field(default_factory=lambda: [False])
    any_agent_context: Context = field(default_factory=Context)
    counters: _Counters = field(default_factory=_Counters)
    trace_id: str = ""
    extras: dict[str, Any] = field(default_factory=dict)
    service_identity: str = DEFAULT_SERVICE_IDENTITY
    breakpoints: BreakpointSource | None = None
    """Where runs pause (``Runner``'s; runtime.debug.breakpoints), read at every step."""
    nested_run: NestedRun | None = None
    """How an agent called as a tool runs (the ``Runner``'s; ``None`` outside a runner)."""

    @property
    def app_name(self) -> str:
        return self.session.app_name

    @property
    def user_id(self) -> str:
        return self.session.user_id

    @property
    def end_invocation(self) -> bool:
        return self.end_invocation_flag[0]

    @end_invocation.setter
    def end_invocation(self, value: bool) -> None:
        self.end_invocation_flag[0] = value

    def for_agent(self, agent: BaseAgent, *, branch: str | None = None) -> InvocationContext:
        return dataclasses.replace(self, agent=agent, branch=branch or self.branch)

    def captures_content(self) -> bool:
        """Whether message content goes on spans: the run's setting and the switchboard (the
        built-in ``gen_ai.content_capture`` step, switchable like a callback) agree."""
        return self.run_config.capture_content and self.switchboard.is_enabled(
            agent_name=self.agent.name, callback_name=CONTENT_CAPTURE, session_id=self.session.id
        )

    def count_llm_call(self) -> None:
        """Count a model call; raise when ``run_config.max_llm_calls`` is exceeded."""
        self.counters.llm_calls += 1
        limit = self.run_config.max_llm_calls
        if 0 < limit < self.counters.llm_calls:
            raise LlmCallsLimitExceededError(
                f"invocation {self.invocation_id} exceeded max_llm_calls={limit}"
            )
