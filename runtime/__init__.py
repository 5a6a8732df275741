"""AgentDash's agent runtime: Google ADK's public surface, any-agent's callbacks, traced.

Everything public is importable from here, e.g. ``from runtime import Agent, Runner``.
This package never imports Django.
"""

from runtime.agents import (
    Agent,
    BaseAgent,
    InstructionView,
    LlmAgent,
    LoopAgent,
    ParallelAgent,
    SequentialAgent,
    inject_session_state,
)
from runtime.artifacts import BaseArtifactService, InMemoryArtifactService
from runtime.callbacks import (
    AllEnabled,
    Callback,
    Context,
    InMemorySwitchboard,
    StepLogger,
    Switchboard,
    callback_name,
    get_default_callbacks,
    named,
)
from runtime.contexts import (
    CallbackContext,
    InvocationContext,
    ReadonlyContext,
    RunConfig,
    StreamingMode,
)
from runtime.errors import (
    AgentNotFoundError,
    CallbackError,
    LlmCallsLimitExceededError,
    MissingStateKeyError,
    ModelCallError,
    ModelNotFoundError,
    ScriptExhaustedError,
)
from runtime.events import Event, EventActions
from runtime.guardrails import LlmScreen
from runtime.memory import (
    BaseMemoryService,
    InMemoryMemoryService,
    MemoryEntry,
    SearchMemoryResponse,
)
from runtime.models import BaseLlm, LlmRequest, LlmResponse, ScriptedLlm
from runtime.models.gemini import Gemini
from runtime.models.offline_llm import OfflineLlm
from runtime.runners import InMemoryRunner, Runner
from runtime.safety import (
    ArgumentRule,
    InvalidQueryPolicyError,
    QueryPolicy,
    ToolArgumentGuard,
    check_query,
    query_policy_from_state,
)
from runtime.sessions import (
    BaseSessionService,
    GetSessionConfig,
    InMemorySessionService,
    ListSessionsResponse,
    Session,
    SessionExistsError,
    SessionNotFoundError,
    State,
)
from runtime.telemetry import GenAI
from runtime.tools import (
    AgentTool,
    AuthConfig,
    BaseTool,
    FunctionTool,
    LongRunningFunctionTool,
    Principal,
    ToolConfirmation,
    ToolContext,
    acts_as,
    transfer_to_agent,
)

__all__ = [
    "Agent",
    "AgentNotFoundError",
    "AgentTool",
    "AllEnabled",
    "ArgumentRule",
    "AuthConfig",
    "BaseAgent",
    "BaseArtifactService",
    "BaseLlm",
    "BaseMemoryService",
    "BaseSessionService",
    "BaseTool",
    "Callback",
    "CallbackContext",
    "CallbackError",
    "Context",
    "Event",
    "EventActions",
    "FunctionTool",
    "Gemini",
    "GenAI",
    "GetSessionConfig",
    "InMemoryArtifactService",
    "InMemoryMemoryService",
    "InMemoryRunner",
    "InMemorySessionService",
    "InMemorySwitchboard",
    "InstructionView",
    "InvalidQueryPolicyError",
    "InvocationContext",
    "ListSessionsResponse",
    "LlmAgent",
    "LlmCallsLimitExceededError",
    "LlmRequest",
    "LlmResponse",
    "LlmScreen",
    "LongRunningFunctionTool",
    "LoopAgent",
    "MemoryEntry",
    "MissingStateKeyError",
    "ModelCallError",
    "ModelNotFoundError",
    "OfflineLlm",
    "ParallelAgent",
    "Principal",
    "QueryPolicy",
    "ReadonlyContext",
    "RunConfig",
    "Runner",
    "ScriptExhaustedError",
    "ScriptedLlm",
    "SearchMemoryResponse",
    "SequentialAgent",
    "Session",
    "SessionExistsError",
    "SessionNotFoundError",
    "State",
    "StepLogger",
    "StreamingMode",
    "Switchboard",
    "ToolArgumentGuard",
    "ToolConfirmation",
    "ToolContext",
    "acts_as",
    "callback_name",
    "check_query",
    "get_default_callbacks",
    "inject_session_state",
    "named",
    "query_policy_from_state",
    "transfer_to_agent",
]
