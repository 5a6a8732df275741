"""Fixtures for the runs tests: a stored session and a run factory."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import pytest

from agentdash.agent_sessions.models import AgentSession
from agentdash.runs.models import Run


@pytest.fixture
def make_run(db: None) -> Callable[..., Run]:
    session = AgentSession.objects.create(
        id="s1", app_name="app", user_id="u", last_update_time=time.time()
    )

    def make(status: str = Run.Status.QUEUED, **fields: object) -> Run:
        return Run.objects.create(
            session=session,
            agent_name=fields.pop("agent_name", "a"),
            invocation_id=f"e-{uuid.uuid4().hex[:12]}",
            status=status,
            message={"role": "user", "parts": [{"text": "hi"}]},
            **fields,
        )

    return make
