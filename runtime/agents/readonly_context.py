"""ADK's ``google.adk.agents.readonly_context``: the class lives in :mod:`runtime.contexts`,
below agents and tools."""

from runtime.contexts.readonly_context import ReadonlyContext

__all__ = ["ReadonlyContext"]
