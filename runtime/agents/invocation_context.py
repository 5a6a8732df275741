"""ADK's ``google.adk.agents.invocation_context``: the class lives in
:mod:`runtime.contexts`, below agents and tools."""

from runtime.contexts.invocation_context import InvocationContext, new_invocation_id

__all__ = ["InvocationContext", "new_invocation_id"]
