"""ADK's ``google.adk.agents.run_config``: the classes live in :mod:`runtime.contexts`,
below agents and tools."""

from runtime.contexts.run_config import RunConfig, StreamingMode

__all__ = ["RunConfig", "StreamingMode"]
