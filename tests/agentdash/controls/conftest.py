"""Fixtures for the controls tests: stored sessions and a query policy."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from agentdash.agent_sessions.models import AgentSession
from agentdash.controls.models import Policy
from agentdash.controls.services import policy_create


@pytest.fixture
def make_session(db: None) -> Callable[[str], AgentSession]:
    def make(session_id: str) -> AgentSession:
        return AgentSession.objects.create(
            id=session_id, app_name="app", user_id="u", last_update_time=time.time()
        )

    return make


@pytest.fixture
def query_policy(db: None) -> Policy:
    return policy_create(
        name="orders only",
        kind="query",
        config={"tables": ["orders"], "max_rows": 50},
        agents=["data_agent"],
        actor=None,
    )
