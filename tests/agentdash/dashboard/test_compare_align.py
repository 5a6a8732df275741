"""The Compare page's alignment: pairs of steps, the word diff, the state diff — on plain
values, and on sessions whose events were written by a real runner (scripted model) through
the Django session service."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from google.genai import types

from agentdash.agent_sessions.models import AgentSession
from agentdash.agent_sessions.session_service import DjangoSessionService
from agentdash.dashboard.compare.align import (
    CHANGED,
    LEFT,
    RIGHT,
    SAME,
    STEP_FIELD,
    Segment,
    align,
    mapping_diff,
    value_text,
    words_diff,
)
from agentdash.dashboard.compare.comparison import Comparison
from agentdash.dashboard.compare.reads import side_read, sides_compare
from agentdash.live.pipeline import LivePipeline
from runtime import LlmAgent, Runner, ScriptedLlm
from tests.agentdash.stored import session_of


# ── Plain values ─────────────────────────────────────────────────────────────────────────────
def _align(left: list[tuple[str, Any]], right: list[tuple[str, Any]]) -> list[Any]:
    pairs = align(left, right, key=lambda s: s[0], fields=lambda s: {"args": s[1]})
    return [(p.status, p.fields) for p in pairs]


def test_identical_sequences_are_all_same() -> None:
    steps = [("agent:root", None), ("tool:get_weather", {"city": "Paris"}), ("text:root", "x")]
    assert _align(steps, list(steps)) == [(SAME, ())] * 3


def test_a_changed_argument_is_a_changed_pair_naming_the_field() -> None:
    left = [("tool:get_weather", {"city": "Paris"}), ("text:root", None)]
    right = [("tool:get_weather", {"city": "Lyon"}), ("text:root", None)]
    assert _align(left, right) == [(CHANGED, ("args",)), (SAME, ())]


def test_an_extra_call_is_only_on_its_side() -> None:
    a, b, c = ("tool:a", 1), ("tool:b", 2), ("tool:c", 3)
    assert _align([a, b, c], [a, c]) == [(SAME, ()), (LEFT, ()), (SAME, ())]
    assert _align([a, c], [a, b, c]) == [(SAME, ()), (RIGHT, ()), (SAME, ())]
    assert _align([], [a]) == [(RIGHT, ())]


def test_different_steps_in_one_place_pair_up_as_changed_steps() -> None:
    pairs = _align([("tool:a", 1), ("tool:x", 1)], [("tool:b", 1)])
    assert pairs == [(CHANGED, (STEP_FIELD,)), (LEFT, ())]


def test_words_diff_marks_only_the_words_that_differ() -> None:
    left, right = words_diff("It is sunny in Paris.", "It is rainy in Paris.")
    assert left == [
        Segment("It is ", "same"),
        Segment("sunny", "del"),
        Segment(" in Paris.", "same"),
    ]
    assert right == [
        Segment("It is ", "same"),
        Segment("rainy", "ins"),
        Segment(" in Paris.", "same"),
    ]
    assert words_diff("same", "same") == ([Segment("same", "same")], [Segment("same", "same")])
    assert words_diff("", "new") == ([], [Segment("new", "ins")])


def test_words_diff_gives_up_on_huge_texts_but_keeps_them_whole() -> None:
    huge = "word " * 10_000
    left, right = words_diff(huge, huge + "more")
    assert left == [Segment(huge, "del")] and right == [Segment(huge + "more", "ins")]


def test_state_is_diffed_key_by_key() -> None:
    found = mapping_diff({"a": 1, "b": [1], "c": "x"}, {"a": 1, "b": [2], "d": None})
    assert [(k.key, k.status, k.left, k.right) for k in found] == [
        ("a", SAME, "1", "1"),
        ("b", CHANGED, "[1]", "[2]"),
        ("c", LEFT, '"x"', None),
        ("d", RIGHT, None, "null"),
    ]


def test_values_are_shown_as_json_and_cut() -> None:
    assert value_text({"b": 1, "a": "é"}) == '{"a": "é", "b": 1}'
    cut = value_text("x" * 10_000, limit=50)
    assert len(cut) == 50 and cut.endswith("…")


# ── Sessions a runner wrote ──────────────────────────────────────────────────────────────────
REPORTS = {"Paris": "sunny", "Lyon": "rainy", "Nice": "windy"}


def weather_agent(script: list[Any]) -> LlmAgent:
    def get_weather(city: str) -> dict[str, str]:
        """The weather in a city."""
        return {"city": city, "report": REPORTS.get(city, "unknown")}

    def get_time(city: str) -> str:
        """The time in a city."""
        return "12:00"

    return LlmAgent(
        name="weather_agent",
        model=ScriptedLlm(responses=script),
        tools=[get_weather, get_time],
        output_key="last_answer",
    )


def call(name: str, **args: Any) -> types.FunctionCall:
    return types.FunctionCall(name=name, args=args)


async def drive(session: AgentSession, agent: LlmAgent, *texts: str) -> None:
    runner = Runner(agent=agent, app_name=session.app_name, session_service=DjangoSessionService())
    for text in texts:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for _ in runner.run_async(
            user_id=session.user_id, session_id=session.id, new_message=message
        ):
            pass


async def compared(
    live: LivePipeline, alice: User, left: list[Any], right: list[Any], *texts: str
) -> Comparison:
    a = await sync_to_async(session_of)(alice, "cmp-left", "weather_agent")
    b = await sync_to_async(session_of)(alice, "cmp-right", "weather_agent")
    await drive(a, weather_agent(left), *texts)
    await drive(b, weather_agent(right), *texts)
    await live.stop()  # every span stored

    def read() -> Comparison:
        return sides_compare(left=side_read(session=a), right=side_read(session=b))

    return await sync_to_async(read)()


@pytest.mark.django_db(transaction=True)
async def test_two_identical_sessions_are_the_same_everywhere(
    live: LivePipeline, alice: User
) -> None:
    script = [call("get_weather", city="Paris"), "It is sunny in Paris."]
    found = await compared(live, alice, script, list(script), "Weather in Paris?")

    assert found.identical
    [turn] = found.turns
    assert turn.status == SAME and turn.left and turn.left.user_text == "Weather in Paris?"
    assert [(p.left.key if p.left else None, p.status) for p in turn.steps] == [
        ("tool:get_weather", SAME),
        ("text:weather_agent", SAME),
    ]
    tool = turn.steps[0].left
    assert tool is not None
    assert tool.args == {"city": "Paris"} and tool.result == {"city": "Paris", "report": "sunny"}
    assert turn.spans and all(p.status == SAME for p in turn.spans)
    assert {p.left.key for p in turn.spans if p.left} >= {
        "agent:weather_agent",
        "tool:get_weather",
        "model:scripted",
    }
    assert found.counts == {SAME: 2, CHANGED: 0, LEFT: 0, RIGHT: 0}
    assert all(k.status == SAME for k in found.state)
    assert [t.delta for t in found.totals if t.label in ("Tool calls", "Turns")] == [0, 0]


@pytest.mark.django_db(transaction=True)
async def test_a_changed_argument_changes_the_call_the_answer_and_the_state(
    live: LivePipeline, alice: User
) -> None:
    found = await compared(
        live,
        alice,
        [call("get_weather", city="Paris"), "It is sunny in Paris."],
        [call("get_weather", city="Lyon"), "It is rainy in Lyon."],
        "Weather in Paris?",
    )

    assert not found.identical
    [turn] = found.turns
    assert turn.status == CHANGED and set(turn.fields) == {"steps", "answer"}
    tool, text = turn.steps
    assert (tool.status, tool.fields) == (CHANGED, ("args", "result"))
    assert (text.status, set(text.fields)) == (CHANGED, {"text", "state"})
    assert [s.op for s in turn.answer_left if s.op != "same"] == ["del", "del"]
    assert "".join(s.text for s in turn.answer_right if s.op == "ins") == "rainyLyon"
    state = {k.key: k for k in found.state}
    assert state["last_answer"].status == CHANGED
    assert found.state_changed == 1


@pytest.mark.django_db(transaction=True)
async def test_an_extra_tool_call_is_only_on_its_side(live: LivePipeline, alice: User) -> None:
    found = await compared(
        live,
        alice,
        [call("get_weather", city="Nice"), call("get_time", city="Nice"), "Windy, noon."],
        [call("get_weather", city="Nice"), "Windy, noon."],
        "Weather and time in Nice?",
    )

    [turn] = found.turns
    assert [(p.status, p.left and p.left.key, p.right and p.right.key) for p in turn.steps] == [
        (SAME, "tool:get_weather", "tool:get_weather"),
        (LEFT, "tool:get_time", None),
        (SAME, "text:weather_agent", "text:weather_agent"),
    ]
    assert found.counts[LEFT] == 1 and found.counts[RIGHT] == 0
    # The span trees: the extra call's tool span and one more model call, only in A.
    only_a = [p.left.key for p in turn.spans if p.status == LEFT and p.left]
    assert "tool:get_time" in only_a and "model:scripted" in only_a
    totals = {t.label: t for t in found.totals}
    assert (totals["Tool calls"].left, totals["Tool calls"].right) == (2, 1)
    assert totals["Tool calls"].delta == -1


@pytest.mark.django_db(transaction=True)
async def test_turns_align_on_the_users_messages(live: LivePipeline, alice: User) -> None:
    script = ["One.", "Two.", "Three."]
    a = await sync_to_async(session_of)(alice, "turns-a", "weather_agent")
    b = await sync_to_async(session_of)(alice, "turns-b", "weather_agent")
    await drive(a, weather_agent(list(script)), "first", "second", "third")
    await drive(b, weather_agent(["One.", "Three."]), "first", "third")
    await live.stop()
    found = await sync_to_async(
        lambda: sides_compare(left=side_read(session=a), right=side_read(session=b))
    )()
    assert [t.status for t in found.turns] == [SAME, LEFT, SAME]
    assert [t.left.user_text if t.left else None for t in found.turns] == [
        "first",
        "second",
        "third",
    ]
