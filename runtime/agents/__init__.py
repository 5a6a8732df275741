from runtime.agents.base_agent import BaseAgent
from runtime.agents.callback_context import CallbackContext
from runtime.agents.instructions import inject_session_state
from runtime.agents.invocation_context import InvocationContext
from runtime.agents.llm_agent import Agent, LlmAgent
from runtime.agents.loop_agent import LoopAgent
from runtime.agents.parallel_agent import ParallelAgent
from runtime.agents.readonly_context import ReadonlyContext
from runtime.agents.run_config import RunConfig, StreamingMode
from runtime.agents.sequential_agent import SequentialAgent

__all__ = [
    "Agent",
    "BaseAgent",
    "CallbackContext",
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
