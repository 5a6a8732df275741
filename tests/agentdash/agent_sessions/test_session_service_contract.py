"""The runtime's session-store contract, unchanged, against the database."""

from __future__ import annotations

import pytest

from agentdash.agent_sessions.session_service import DjangoSessionService
from tests.runtime.sessions.contract import SessionServiceContract

pytestmark = pytest.mark.django_db(transaction=True)


class TestDjangoSessionService(SessionServiceContract):
    @pytest.fixture
    def service(self) -> DjangoSessionService:
        return DjangoSessionService()
