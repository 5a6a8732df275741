"""System check ``agentdash.E010``: every configured agent path loads."""

from __future__ import annotations

import pytest
from django.core import checks
from django.core.management import call_command
from django.core.management.base import SystemCheckError

SAMPLES = "tests.agentdash.registry.sample_agents"


def e010_messages() -> list[str]:
    return [m.msg for m in checks.run_checks() if m.id == "agentdash.E010"]


def test_the_configured_agents_pass() -> None:
    assert e010_messages() == []


def test_each_path_that_does_not_load_is_reported(settings) -> None:  # type: ignore[no-untyped-def]
    settings.AGENTDASH = {
        "AGENTS": [f"{SAMPLES}:root_agent", "nowhere.agents:root_agent", f"{SAMPLES}:nothing"]
    }
    messages = e010_messages()
    assert len(messages) == 2
    assert "'nowhere.agents:root_agent'" in messages[0]
    assert f"'{SAMPLES}:nothing'" in messages[1]


def test_duplicate_root_names_are_reported(settings) -> None:  # type: ignore[no-untyped-def]
    settings.AGENTDASH = {"AGENTS": [f"{SAMPLES}:root_agent", f"{SAMPLES}:alpha_again"]}
    (message,) = e010_messages()
    assert "both define a root agent named 'alpha'" in message


def test_manage_py_check_fails(settings) -> None:  # type: ignore[no-untyped-def]
    settings.AGENTDASH = {"AGENTS": ["nowhere.agents:root_agent"]}
    with pytest.raises(SystemCheckError, match=r"agentdash\.E010"):
        call_command("check")
