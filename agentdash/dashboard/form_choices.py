"""Choices the pages' forms share."""

from __future__ import annotations

from agentdash.registry.selectors import agent_list


def agent_choices() -> list[tuple[str, str]]:
    """The configured agents, as (value, label) pairs: their names."""
    names = agent_list().values_list("name", flat=True)
    return [(name, name) for name in names]
