"""The capital-city agent with ADK's four callback examples (``before_model``,
``after_model``, ``before_tool``, ``after_tool``), as defined in :mod:`runtime.examples.capital`.
"""

from __future__ import annotations

from runtime.examples.capital import default_model
from runtime.examples.capital import root_agent as capital_agent

root_agent = capital_agent

__all__ = ["capital_agent", "default_model", "root_agent"]
