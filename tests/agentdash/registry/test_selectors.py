"""Reads of the registry."""

from __future__ import annotations

import pytest

from agentdash.demo import capital
from agentdash.registry.loader import AgentNotRegisteredError
from agentdash.registry.selectors import agent_callbacks, agent_get, agent_list
from agentdash.registry.services import agents_mirror


@pytest.mark.django_db
def test_agent_list_shows_only_configured_agents(settings) -> None:  # type: ignore[no-untyped-def]
    agents_mirror()
    assert [r.name for r in agent_list()] == [
        "analyst",
        "capital_agent",
        "data_agent",
        "support_desk",
    ]
    settings.AGENTDASH = {"AGENTS": ["agentdash.demo.capital:root_agent"]}
    agents_mirror()
    assert [r.name for r in agent_list()] == ["capital_agent"]
    assert len(agent_list(include_unavailable=True)) == 4


def test_agent_get_returns_the_loaded_object() -> None:
    assert agent_get(name="capital_agent") is capital.root_agent


def test_agent_get_of_an_unknown_name_lists_the_known_ones() -> None:
    known = "analyst, capital_agent, data_agent, support_desk"
    with pytest.raises(AgentNotRegisteredError, match=known):
        agent_get(name="nobody")


def test_agent_callbacks_of_the_capital_agent() -> None:
    assert [(c["slot"], c["name"], c["style"]) for c in agent_callbacks(name="capital_agent")] == [
        ("before_model", "block_keyword_guardrail", "adk"),
        ("after_model", "add_disclaimer", "adk"),
        ("before_tool", "redirect_canada", "adk"),
        ("after_tool", "annotate_usa", "adk"),
        ("callbacks", "StepLogger", "any-agent"),
    ]
