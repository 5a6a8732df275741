from __future__ import annotations

import threading

import pytest

from runtime import Event, EventActions, InMemorySessionService
from tests.runtime.sessions.contract import SessionServiceContract


class TestInMemorySessionService(SessionServiceContract):
    @pytest.fixture
    def service(self) -> InMemorySessionService:
        return InMemorySessionService()


def test_concurrent_writers_lose_no_update() -> None:
    service = InMemorySessionService()
    s = service.create_session(app_name="app", user_id="u")

    def writer(n: int) -> None:
        live = service.get_session(app_name="app", user_id="u", session_id=s.id)
        assert live is not None
        for i in range(50):
            service.append_event(
                live,
                Event(author="agent", actions=EventActions(state_delta={f"w{n}:{i}": i})),
            )

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    got = service.get_session(app_name="app", user_id="u", session_id=s.id)
    assert got is not None
    assert len(got.events) == 400
    assert len(got.state) == 400
