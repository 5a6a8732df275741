"""Fixtures for the timeline tests: stored sessions."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from agentdash.agent_sessions.models import AgentSession


@pytest.fixture
def make_session(db: None) -> Callable[[str], AgentSession]:
    def make(session_id: str) -> AgentSession:
        return AgentSession.objects.create(
            id=session_id, app_name="app", user_id="u", last_update_time=time.time()
        )

    return make
