"""DatabaseSwitchboard: the runtime's switchboard answered from a snapshot of the database."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest
from google.genai import types

from agentdash.agent_sessions.models import AgentSession
from agentdash.controls import switchboard as switchboard_module
from agentdash.controls.services import callback_setting_clear, callback_setting_set
from agentdash.controls.switchboard import CallbackSettingChange, DatabaseSwitchboard
from runtime import Agent, InMemorySessionService, InMemorySwitchboard, Runner, ScriptedLlm
from runtime.callbacks.switchboard import Switchboard


def ask(board: Switchboard, agent: str = "a", callback: str = "g", session: str = "s1") -> bool:
    return board.is_enabled(agent_name=agent, callback_name=callback, session_id=session)


def test_it_is_a_runtime_switchboard_and_starts_all_on() -> None:
    board = DatabaseSwitchboard()
    assert isinstance(board, Switchboard)
    assert ask(board) is True


@pytest.mark.django_db
def test_precedence_session_over_agent_over_default(
    make_session: Callable[[str], AgentSession],
) -> None:
    make_session("s1")
    make_session("s2")
    callback_setting_set(agent_name="a", callback_name="g", enabled=False, actor=None)
    callback_setting_set(
        agent_name="a", callback_name="g", enabled=True, session_id="s1", actor=None
    )
    callback_setting_set(
        agent_name="b", callback_name="g", enabled=False, session_id="s2", actor=None
    )
    board = DatabaseSwitchboard()
    board.refresh()
    assert ask(board, "a", "g", "s1") is True  # the session's own setting wins
    assert ask(board, "a", "g", "s2") is False  # the agent-wide one
    assert ask(board, "a", "other", "s2") is True  # another callback: default
    assert ask(board, "b", "g", "s1") is True  # another agent: a setting is for one agent
    assert ask(board, "b", "g", "s2") is False


def test_agrees_with_the_runtime_in_memory_switchboard() -> None:
    """Every combination of agent-scoped settings answers as InMemorySwitchboard does."""
    scopes = [("a", None), ("a", "s1"), ("b", "s1")]
    for values in itertools.product([None, True, False], repeat=len(scopes)):
        ours, theirs = DatabaseSwitchboard(), InMemorySwitchboard()
        for (agent, session), value in zip(scopes, values, strict=True):
            if value is not None:
                ours.apply(CallbackSettingChange(agent, "g", session, value))
                theirs.set("g", value, agent_name=agent, session_id=session)
        for agent, session in itertools.product(["a", "b"], ["s1", "s2"]):
            assert ask(ours, agent, "g", session) == ask(theirs, agent, "g", session), values


@pytest.mark.django_db
def test_is_enabled_never_touches_the_database(django_assert_num_queries) -> None:  # type: ignore[no-untyped-def]
    callback_setting_set(agent_name="a", callback_name="g", enabled=False, actor=None)
    board = DatabaseSwitchboard()
    with django_assert_num_queries(1):
        board.refresh()
    with django_assert_num_queries(0):
        for _ in range(3):
            assert ask(board) is False
            assert ask(board, callback="other") is True


@pytest.mark.django_db
def test_refresh_picks_up_database_changes() -> None:
    board = DatabaseSwitchboard()
    board.refresh()
    callback_setting_set(agent_name="a", callback_name="g", enabled=False, actor=None)
    assert ask(board) is True  # a snapshot: unchanged until refreshed or pushed
    board.refresh()
    assert ask(board) is False
    callback_setting_clear(agent_name="a", callback_name="g", actor=None)
    board.refresh()
    assert ask(board) is True and dict(board.snapshot()) == {}


def test_apply_sets_and_clears_without_a_reload() -> None:
    board = DatabaseSwitchboard()
    board.apply(CallbackSettingChange("a", "g", None, False))
    assert ask(board) is False
    board.apply({"agent_name": "a", "callback_name": "g", "session_id": "s1", "enabled": True})
    assert ask(board, session="s1") is True and ask(board, session="s2") is False
    board.apply(CallbackSettingChange("a", "g", None, None).as_message())
    assert ask(board, session="s2") is True
    assert dict(board.snapshot()) == {("g", "a", "s1"): True}


@pytest.mark.parametrize(
    "message",
    [{}, {"agent_name": "a"}, {"agent_name": "a", "callback_name": "g", "enabled": "no"}, None],
)
def test_malformed_pushed_change_is_refused(message: object) -> None:
    board = DatabaseSwitchboard()
    with pytest.raises(ValueError, match="not a callback setting change"):
        board.apply(message)  # type: ignore[arg-type]
    assert dict(board.snapshot()) == {}


def test_a_change_pushed_during_a_reload_survives_it(monkeypatch: pytest.MonkeyPatch) -> None:
    board = DatabaseSwitchboard()

    def stale_load() -> dict:
        # The database is read, then the switch flips and is pushed, then the load lands.
        board.apply(CallbackSettingChange("a", "g", None, False))
        return {("other", "a", None): False}

    monkeypatch.setattr(switchboard_module, "callback_settings_snapshot", stale_load)
    board.refresh()
    assert ask(board) is False
    assert ask(board, callback="other") is False


def test_a_failed_reload_keeps_the_old_snapshot(monkeypatch: pytest.MonkeyPatch) -> None:
    board = DatabaseSwitchboard({("g", "a", None): False})

    def broken() -> dict:
        raise RuntimeError("db down")

    monkeypatch.setattr(switchboard_module, "callback_settings_snapshot", broken)
    with pytest.raises(RuntimeError):
        board.refresh()
    assert ask(board) is False
    board.apply(CallbackSettingChange("a", "g", None, True))
    assert ask(board) is True


@pytest.mark.django_db(transaction=True)
async def test_arefresh_loads_from_the_database() -> None:
    from asgiref.sync import sync_to_async

    await sync_to_async(callback_setting_set)(
        agent_name="a", callback_name="g", enabled=False, actor=None
    )
    board = DatabaseSwitchboard()
    await board.arefresh()
    assert ask(board) is False


@pytest.mark.django_db
def test_a_runner_honours_a_database_toggle_after_refresh() -> None:
    calls: list[str] = []

    def guard(callback_context, llm_request):  # type: ignore[no-untyped-def]
        calls.append(callback_context.session.id)

    agent = Agent(
        name="a", model=ScriptedLlm(responses=["1", "2", "3"]), before_model_callback=guard
    )
    sessions = InMemorySessionService()
    sessions.create_session(app_name="app", user_id="u", session_id="s")
    board = DatabaseSwitchboard()
    board.refresh()
    runner = Runner(agent=agent, app_name="app", session_service=sessions, switchboard=board)

    def run_once() -> None:
        message = types.Content(role="user", parts=[types.Part(text="hi")])
        for _ in runner.run(user_id="u", session_id="s", new_message=message):
            pass

    run_once()
    callback_setting_set(agent_name="a", callback_name="guard", enabled=False, actor=None)
    run_once()  # not refreshed yet: the guard still runs
    board.refresh()
    run_once()
    assert calls == ["s", "s"]
