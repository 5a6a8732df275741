"""Loading agents from ``AGENTDASH["AGENTS"]``: good paths, bad paths, duplicate names."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from agentdash.registry.loader import agent_import, agents_load, agents_load_entries
from runtime import BaseAgent
from tests.agentdash.registry import sample_agents

SAMPLES = "tests.agentdash.registry.sample_agents"


def test_paths_load_to_root_agents_by_name(settings) -> None:  # type: ignore[no-untyped-def]
    settings.AGENTDASH = {"AGENTS": [f"{SAMPLES}:root_agent", f"{SAMPLES}:beta"]}
    agents = agents_load()
    assert list(agents) == ["alpha", "beta"]
    assert agents["alpha"] is sample_agents.root_agent
    assert all(isinstance(a, BaseAgent) for a in agents.values())


def test_the_attribute_defaults_to_root_agent() -> None:
    assert agents_load(paths=[SAMPLES]) == {"alpha": sample_agents.root_agent}
    assert agents_load_entries(paths=[SAMPLES])["alpha"].dotted_path == SAMPLES


def test_an_agent_is_imported_once_and_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    first = agent_import(dotted_path=f"{SAMPLES}:beta")
    monkeypatch.setattr(sample_agents, "beta", "replaced")  # a re-import would see this
    assert agent_import(dotted_path=f"{SAMPLES}:beta") is first


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("no_such_package.agents:root_agent", "cannot import module 'no_such_package.agents'"),
        (f"{SAMPLES}:missing", "has no 'missing'"),
        (f"{SAMPLES}:not_an_agent", "is a dict, not a runtime.BaseAgent"),
        ("tests.agentdash.registry.broken_agents", "RuntimeError: the agent module is broken"),
        ("not a path", "is not of the form 'package.module:attribute'"),
        (":root_agent", "is not of the form"),
    ],
)
def test_a_bad_path_is_a_clear_error_naming_it(path: str, message: str) -> None:
    with pytest.raises(ImproperlyConfigured) as excinfo:
        agents_load(paths=[f"{SAMPLES}:beta", path])
    assert f"AGENTDASH['AGENTS'] entry {path!r}" in str(excinfo.value)
    assert message in str(excinfo.value)


def test_two_root_agents_with_one_name_are_an_error_naming_both_paths() -> None:
    first, second = f"{SAMPLES}:root_agent", f"{SAMPLES}:alpha_again"
    with pytest.raises(ImproperlyConfigured) as excinfo:
        agents_load(paths=[first, second])
    text = str(excinfo.value)
    assert repr(first) in text and repr(second) in text and "'alpha'" in text


def test_the_demo_agents_are_configured_by_default() -> None:
    assert set(agents_load()) == {"capital_agent", "support_desk", "data_agent", "analyst"}
