"""ADK's ``google.adk.agents.callback_context``: the class lives in :mod:`runtime.contexts`,
below agents and tools."""

from runtime.contexts.callback_context import CallbackContext

__all__ = ["CallbackContext"]
