"""The Monitor's tests' generated set (``generated.py``) as a fixture."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from agentdash.agent_sessions.models import AgentSession
from tests.agentdash.monitor.generated import generated_set


@pytest.fixture
def generated(alice: User, bob: User) -> dict[str, AgentSession]:
    """alice: 4 runs of capital_agent (2 succeeded, 1 failed, 1 cancelled) at 09:05–09:35,
    3 model calls (1 s, 2 s, 4 s), 2 tool calls (one failed); bob: 1 failed run of
    support_agent at 10:10, 1 tool call; an ingested session of alice's: 1 succeeded run."""
    return generated_set(alice, bob)
