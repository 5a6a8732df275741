"""What one invocation's agents, callbacks and tools share, and what they are given.

:class:`InvocationContext` (the invocation: session, services, switchboard, run options),
:class:`ReadonlyContext` (instruction providers), :class:`CallbackContext` (agent and model
callbacks; ``runtime.tools.ToolContext`` extends it for tools) and :class:`RunConfig`. Below
agents and tools, which both use them; ADK's paths (``runtime.agents.callback_context`` …)
re-export them.
"""

from runtime.contexts.callback_context import CallbackContext
from runtime.contexts.invocation_context import (
    DEFAULT_SERVICE_IDENTITY,
    InvocationContext,
    NestedRun,
    new_invocation_id,
)
from runtime.contexts.readonly_context import ReadonlyContext
from runtime.contexts.run_config import RunConfig, StreamingMode

__all__ = [
    "DEFAULT_SERVICE_IDENTITY",
    "CallbackContext",
    "InvocationContext",
    "NestedRun",
    "ReadonlyContext",
    "RunConfig",
    "StreamingMode",
    "new_invocation_id",
]
