"""The behaviour every BaseSessionService must have.

Subclass :class:`SessionServiceContract` in a test module and provide a ``service`` fixture;
the same tests then run against that store (the in-memory one here, the Django one in the
app's tests).
"""

from __future__ import annotations

import time

import pytest
from google.genai import types

from runtime import (
    BaseSessionService,
    Event,
    EventActions,
    GetSessionConfig,
    SessionExistsError,
)


def _event(author: str = "agent", text: str | None = "hi", **delta: object) -> Event:
    content = types.Content(role="model", parts=[types.Part(text=text)]) if text else None
    return Event(
        invocation_id="e-1",
        author=author,
        content=content,
        actions=EventActions(state_delta=dict(delta)),
    )


class SessionServiceContract:
    @pytest.fixture
    def service(self) -> BaseSessionService:
        raise NotImplementedError("subclasses provide the store under test")

    def test_create_then_get_returns_the_session(self, service: BaseSessionService) -> None:
        created = service.create_session(app_name="app", user_id="u1", state={"k": 1})
        got = service.get_session(app_name="app", user_id="u1", session_id=created.id)
        assert got is not None
        assert (got.id, got.app_name, got.user_id) == (created.id, "app", "u1")
        assert got.state == {"k": 1}
        assert got.events == []

    def test_explicit_id_is_kept_and_duplicates_refused(self, service: BaseSessionService) -> None:
        service.create_session(app_name="app", user_id="u1", session_id="s-1")
        with pytest.raises(SessionExistsError):
            service.create_session(app_name="app", user_id="u1", session_id="s-1")

    def test_missing_session_is_none(self, service: BaseSessionService) -> None:
        assert service.get_session(app_name="app", user_id="u1", session_id="nope") is None

    def test_other_users_session_is_not_visible(self, service: BaseSessionService) -> None:
        s = service.create_session(app_name="app", user_id="u1")
        assert service.get_session(app_name="app", user_id="u2", session_id=s.id) is None
        assert service.get_session(app_name="other", user_id="u1", session_id=s.id) is None

    def test_append_event_stores_event_and_applies_delta(self, service: BaseSessionService) -> None:
        s = service.create_session(app_name="app", user_id="u1")
        service.append_event(s, _event(status="active", count=2))
        assert s.state == {"status": "active", "count": 2}
        got = service.get_session(app_name="app", user_id="u1", session_id=s.id)
        assert got is not None
        assert got.state == {"status": "active", "count": 2}
        assert [e.text for e in got.events] == ["hi"]
        assert got.events[0].actions.state_delta == {"status": "active", "count": 2}

    def test_events_keep_their_order(self, service: BaseSessionService) -> None:
        s = service.create_session(app_name="app", user_id="u1")
        for i in range(5):
            service.append_event(s, _event(text=f"m{i}"))
        got = service.get_session(app_name="app", user_id="u1", session_id=s.id)
        assert got is not None
        assert [e.text for e in got.events] == [f"m{i}" for i in range(5)]

    def test_partial_events_are_not_stored(self, service: BaseSessionService) -> None:
        s = service.create_session(app_name="app", user_id="u1")
        partial = _event(text="chunk", key="v")
        partial.partial = True
        service.append_event(s, partial)
        got = service.get_session(app_name="app", user_id="u1", session_id=s.id)
        assert got is not None
        assert got.events == [] and "key" not in got.state

    def test_temp_keys_are_visible_live_but_never_stored(self, service: BaseSessionService) -> None:
        s = service.create_session(app_name="app", user_id="u1", state={"temp:x": 1})
        stored = service.append_event(s, _event(**{"temp:flag": True, "kept": 1}))
        assert s.state["temp:flag"] is True
        assert stored.actions.state_delta == {"kept": 1}
        got = service.get_session(app_name="app", user_id="u1", session_id=s.id)
        assert got is not None
        assert got.state == {"kept": 1}
        assert "temp:flag" not in got.events[0].actions.state_delta

    def test_user_state_is_shared_by_one_users_sessions(self, service: BaseSessionService) -> None:
        a = service.create_session(app_name="app", user_id="u1")
        service.append_event(a, _event(**{"user:lang": "fr", "own": "a"}))
        b = service.create_session(app_name="app", user_id="u1")
        assert b.state == {"user:lang": "fr"}
        other_user = service.create_session(app_name="app", user_id="u2")
        assert "user:lang" not in other_user.state
        other_app = service.create_session(app_name="app2", user_id="u1")
        assert "user:lang" not in other_app.state

    def test_app_state_is_shared_by_every_user_of_the_app(
        self, service: BaseSessionService
    ) -> None:
        a = service.create_session(app_name="app", user_id="u1")
        service.append_event(a, _event(**{"app:banner": "hello"}))
        b = service.create_session(app_name="app", user_id="u2")
        assert b.state == {"app:banner": "hello"}
        other_app = service.create_session(app_name="app2", user_id="u2")
        assert other_app.state == {}

    def test_initial_state_is_scoped_by_prefix(self, service: BaseSessionService) -> None:
        service.create_session(
            app_name="app", user_id="u1", state={"user:tier": "gold", "app:v": 2, "own": 1}
        )
        fresh = service.create_session(app_name="app", user_id="u1")
        assert fresh.state == {"user:tier": "gold", "app:v": 2}

    def test_editing_a_fetched_sessions_state_persists_nothing(
        self, service: BaseSessionService
    ) -> None:
        s = service.create_session(app_name="app", user_id="u1", state={"k": "v"})
        got = service.get_session(app_name="app", user_id="u1", session_id=s.id)
        assert got is not None
        got.state["k"] = "changed"
        got.state["new"] = 1
        again = service.get_session(app_name="app", user_id="u1", session_id=s.id)
        assert again is not None
        assert again.state == {"k": "v"}

    def test_list_sessions_by_user_without_events(self, service: BaseSessionService) -> None:
        a = service.create_session(app_name="app", user_id="u1")
        service.append_event(a, _event())
        b = service.create_session(app_name="app", user_id="u1")
        service.create_session(app_name="app", user_id="u2")
        service.create_session(app_name="other", user_id="u1")
        mine = service.list_sessions(app_name="app", user_id="u1").sessions
        assert {s.id for s in mine} == {a.id, b.id}
        assert all(s.events == [] for s in mine)
        assert len(service.list_sessions(app_name="app").sessions) == 3

    def test_delete_session(self, service: BaseSessionService) -> None:
        s = service.create_session(app_name="app", user_id="u1")
        service.delete_session(app_name="app", user_id="u1", session_id=s.id)
        assert service.get_session(app_name="app", user_id="u1", session_id=s.id) is None
        service.delete_session(app_name="app", user_id="u1", session_id=s.id)  # idempotent

    def test_get_session_config_limits_events(self, service: BaseSessionService) -> None:
        s = service.create_session(app_name="app", user_id="u1")
        for i in range(4):
            service.append_event(s, _event(text=f"m{i}"))
            time.sleep(0.002)
        recent = service.get_session(
            app_name="app",
            user_id="u1",
            session_id=s.id,
            config=GetSessionConfig(num_recent_events=2),
        )
        assert recent is not None
        assert [e.text for e in recent.events] == ["m2", "m3"]
        cutoff = recent.events[0].timestamp
        after = service.get_session(
            app_name="app",
            user_id="u1",
            session_id=s.id,
            config=GetSessionConfig(after_timestamp=cutoff),
        )
        assert after is not None
        assert [e.text for e in after.events] == ["m3"]

    async def test_async_twins(self, service: BaseSessionService) -> None:
        s = await service.acreate_session(app_name="app", user_id="u1", session_id="as")
        await service.aappend_event(s, _event(k="v"))
        got = await service.aget_session(app_name="app", user_id="u1", session_id="as")
        assert got is not None and got.state == {"k": "v"}
        listed = await service.alist_sessions(app_name="app", user_id="u1")
        assert [x.id for x in listed.sessions] == ["as"]
        await service.adelete_session(app_name="app", user_id="u1", session_id="as")
        assert await service.aget_session(app_name="app", user_id="u1", session_id="as") is None

    def test_last_update_time_moves_forward(self, service: BaseSessionService) -> None:
        s = service.create_session(app_name="app", user_id="u1")
        before = s.last_update_time
        time.sleep(0.002)
        service.append_event(s, _event())
        got = service.get_session(app_name="app", user_id="u1", session_id=s.id)
        assert got is not None and got.last_update_time > before
