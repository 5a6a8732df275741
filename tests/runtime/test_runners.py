from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest
from google.genai import types

from runtime import (
    Agent,
    CallbackError,
    InMemoryRunner,
    InMemorySessionService,
    InMemorySwitchboard,
    LlmCallsLimitExceededError,
    LlmResponse,
    RunConfig,
    Runner,
    ScriptedLlm,
    ScriptExhaustedError,
    SessionNotFoundError,
    StreamingMode,
)


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def make_runner(agent: Agent, **kwargs: object) -> tuple[Runner, InMemorySessionService, str]:
    service = InMemorySessionService()
    session = service.create_session(app_name="app", user_id="u")
    return (
        Runner(agent=agent, app_name="app", session_service=service, **kwargs),
        service,
        session.id,
    )  # type: ignore[arg-type]


def test_sync_run_yields_and_persists_events() -> None:
    runner, service, sid = make_runner(Agent(name="a", model=ScriptedLlm(responses=["hello"])))
    events = list(runner.run(user_id="u", session_id=sid, new_message=user("hi")))
    assert [e.text for e in events] == ["hello"]
    assert events[0].is_final_response()
    stored = service.get_session(app_name="app", user_id="u", session_id=sid)
    assert stored is not None
    assert [(e.author, e.text) for e in stored.events] == [("u" and "user", "hi"), ("a", "hello")]
    assert stored.events[0].invocation_id == stored.events[1].invocation_id


def test_sync_run_works_inside_a_running_event_loop() -> None:
    runner, _, sid = make_runner(Agent(name="a", model=ScriptedLlm(responses=["ok"])))

    async def main() -> list[str]:
        return [e.text for e in runner.run(user_id="u", session_id=sid, new_message=user("x"))]

    assert asyncio.run(main()) == ["ok"]


def test_sync_run_raises_the_runs_exception() -> None:
    runner, _, sid = make_runner(Agent(name="a", model=ScriptedLlm(responses=[])))
    with pytest.raises(ScriptExhaustedError, match="no response left"):
        list(runner.run(user_id="u", session_id=sid, new_message=user("x")))


async def test_unknown_session_is_a_clear_error() -> None:
    runner, _, _ = make_runner(Agent(name="a", model=ScriptedLlm(responses=["x"])))
    with pytest.raises(SessionNotFoundError, match="nope"):
        async for _ in runner.run_async(user_id="u", session_id="nope", new_message=user("x")):
            pass


async def test_errors_carry_invocation_and_trace_note() -> None:
    runner, _, sid = make_runner(Agent(name="a", model=ScriptedLlm(responses=[KeyError("k")])))
    with pytest.raises(KeyError) as info:
        async for _ in runner.run_async(user_id="u", session_id=sid, new_message=user("x")):
            pass
    assert any(n.startswith("invocation e-") and "trace" in n for n in info.value.__notes__)


async def test_streaming_yields_partials_that_are_not_stored() -> None:
    runner, service, sid = make_runner(
        Agent(name="a", model=ScriptedLlm(responses=["one two three"]))
    )
    events = [
        e
        async for e in runner.run_async(
            user_id="u",
            session_id=sid,
            new_message=user("x"),
            run_config=RunConfig(streaming_mode=StreamingMode.SSE),
        )
    ]
    partial = [e.text for e in events if e.partial]
    assert "".join(partial) == "one two three" and len(partial) == 3
    assert [e.text for e in events if not e.partial] == ["one two three"]
    assert not any(e.is_final_response() for e in events if e.partial)
    stored = service.get_session(app_name="app", user_id="u", session_id=sid)
    assert stored is not None and [e.text for e in stored.events] == ["x", "one two three"]


async def test_max_llm_calls_bounds_a_runaway_loop() -> None:
    def again() -> str:
        """Loop forever."""
        return "again"

    calls = [types.FunctionCall(name="again", args={}) for _ in range(10)]
    runner, _, sid = make_runner(Agent(name="a", model=ScriptedLlm(responses=calls), tools=[again]))
    with pytest.raises(LlmCallsLimitExceededError, match="max_llm_calls=3"):
        async for _ in runner.run_async(
            user_id="u",
            session_id=sid,
            new_message=user("x"),
            run_config=RunConfig(max_llm_calls=3),
        ):
            pass


async def test_state_delta_with_new_message_is_applied() -> None:
    runner, service, sid = make_runner(Agent(name="a", model=ScriptedLlm(responses=["ok"])))
    async for _ in runner.run_async(
        user_id="u", session_id=sid, new_message=user("x"), state_delta={"source": "api"}
    ):
        pass
    stored = service.get_session(app_name="app", user_id="u", session_id=sid)
    assert stored is not None and stored.state["source"] == "api"


async def test_switch_flipped_mid_run_applies_at_the_next_call_point() -> None:
    board = InMemorySwitchboard()
    seen: list[str] = []

    def guard(callback_context, llm_request):  # type: ignore[no-untyped-def]
        seen.append("guard")

    def slow_tool() -> str:
        """Takes a while; an operator flips the switch meanwhile."""
        board.disable("guard", agent_name="a")
        return "done"

    agent = Agent(
        name="a",
        model=ScriptedLlm(responses=[types.FunctionCall(name="slow_tool", args={}), "end"]),
        tools=[slow_tool],
        before_model_callback=guard,
    )
    runner, _, sid = make_runner(agent, switchboard=board)
    async for _ in runner.run_async(user_id="u", session_id=sid, new_message=user("x")):
        pass
    assert seen == ["guard"]  # ran before the first model call, not before the second


async def test_switch_scoped_to_one_session() -> None:
    board = InMemorySwitchboard()
    seen: list[str] = []

    def guard(callback_context, llm_request):  # type: ignore[no-untyped-def]
        seen.append(callback_context.session.id)

    agent = Agent(name="a", model=ScriptedLlm(responses=["1", "2"]), before_model_callback=guard)
    service = InMemorySessionService()
    s1 = service.create_session(app_name="app", user_id="u", session_id="s1")
    s2 = service.create_session(app_name="app", user_id="u", session_id="s2")
    board.disable("guard", session_id="s1")
    runner = Runner(agent=agent, app_name="app", session_service=service, switchboard=board)
    for s in (s1, s2):
        async for _ in runner.run_async(user_id="u", session_id=s.id, new_message=user("x")):
            pass
    assert seen == ["s2"]


async def test_wrong_callback_return_type_is_a_clear_error() -> None:
    def bad(callback_context, llm_request):  # type: ignore[no-untyped-def]
        return {"not": "an LlmResponse"}

    runner, _, sid = make_runner(
        Agent(name="a", model=ScriptedLlm(responses=["x"]), before_model_callback=bad)
    )
    with pytest.raises(
        CallbackError, match="returned dict; before_model callbacks return LlmResponse"
    ):
        async for _ in runner.run_async(user_id="u", session_id=sid, new_message=user("x")):
            pass


async def test_model_error_response_becomes_an_error_event() -> None:
    failed = LlmResponse(error_code="SAFETY", error_message="blocked")
    runner, _, sid = make_runner(Agent(name="a", model=ScriptedLlm(responses=[failed])))
    events = [e async for e in runner.run_async(user_id="u", session_id=sid, new_message=user("x"))]
    assert [(e.error_code, e.error_message) for e in events] == [("SAFETY", "blocked")]


async def test_in_memory_runner_wires_services() -> None:
    runner = InMemoryRunner(Agent(name="a", model=ScriptedLlm(responses=["x"])), app_name="demo")
    session = await runner.session_service.acreate_session(app_name="demo", user_id="u")
    events = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message=user("q"))
    ]
    assert events[0].text == "x"
    assert runner.artifact_service is not None and runner.memory_service is not None


@pytest.mark.slow  # a process of its own: seconds
def test_runtime_imports_without_django() -> None:
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('django', 'channels', 'daphne'):\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import runtime, runtime.testing.gemini_server\n"
        "assert not any(m.split('.')[0] == 'django' for m in sys.modules)\n"
        "print(len(runtime.__all__))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) > 50
