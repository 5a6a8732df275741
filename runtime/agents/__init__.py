from runtime.agents.base_agent import BaseAgent
from runtime.agents.instructions import InstructionView, inject_session_state
from runtime.agents.llm_agent import Agent, LlmAgent
from runtime.agents.loop_agent import LoopAgent
from runtime.agents.parallel_agent import ParallelAgent
from runtime.agents.sequential_agent import SequentialAgent
from runtime.contexts import (
    CallbackContext,
    InvocationContext,
    ReadonlyContext,
    RunConfig,
    StreamingMode,
)

__all__ = [
    "Agent",
    "BaseAgent",
    "CallbackContext",
    "InstructionView",
    "InvocationContext",
    "LlmAgent",
    "LoopAgent",
    "ParallelAgent",
    "ReadonlyContext",
    "RunConfig",
    "SequentialAgent",
    "StreamingMode",
    "inject_session_state",
]
