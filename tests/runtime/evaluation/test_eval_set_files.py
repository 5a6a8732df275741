"""Eval sets as ``adk`` writes them load; written back they keep ADK's form."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from google.genai import types

from runtime.evaluation import (
    EvalCase,
    EvalSet,
    EvalSetFormatError,
    Invocation,
    InvocationEvents,
    eval_set_data,
    eval_set_dump,
    eval_set_load,
    eval_set_loads,
)

DATA = Path(__file__).parent / "data"


def test_the_home_automation_example_of_adks_evaluate_docs_loads() -> None:
    loaded = eval_set_loads((DATA / "home_automation.evalset.json").read_text())

    assert loaded.eval_set_id == "home_automation_agent_light_on_off_set"
    (case,) = loaded.eval_cases
    assert case.eval_id == "eval_case_id"
    assert case.session_input is not None
    assert (case.session_input.app_name, case.session_input.user_id) == (
        "home_automation_agent",
        "test_user",
    )
    assert case.conversation is not None
    (turn,) = case.conversation
    assert turn.user_content.parts and turn.user_content.parts[0].text == (
        "Turn off device_2 in the Bedroom."
    )
    (call,) = turn.tool_calls()
    assert call.name == "set_device_info"
    assert call.args == {"location": "Bedroom", "device_id": "device_2", "status": "OFF"}


def test_a_file_adk_wrote_with_every_null_loads() -> None:
    # tests/integration/fixture/home_automation_agent/simple_test.test.json of adk-python.
    loaded = eval_set_loads((DATA / "simple_test.test.json").read_bytes())
    (case,) = loaded.eval_cases
    assert case.session_input is None and case.creation_timestamp == pytest.approx(1747337309.2)
    assert case.conversation and case.conversation[0].tool_calls()[0].name == "set_device_info"


def test_camel_case_names_of_adk_web_are_accepted() -> None:
    data = {
        "evalSetId": "s",
        "evalCases": [
            {
                "evalId": "c",
                "conversation": [
                    {
                        "invocationId": "i",
                        "userContent": {"parts": [{"text": "hi"}], "role": "user"},
                        "finalResponse": {"parts": [{"text": "hello"}], "role": "model"},
                        "intermediateData": {
                            "toolUses": [{"name": "greet", "args": {"who": "you"}}],
                            "toolResponses": [{"name": "greet", "response": {"ok": True}}],
                        },
                    }
                ],
                "sessionInput": {"appName": "a", "userId": "u", "state": {"k": 1}},
            }
        ],
    }
    loaded = eval_set_load(data)
    turn = loaded.eval_cases[0].conversation[0]  # type: ignore[index]
    assert [c.name for c in turn.tool_calls()] == ["greet"]
    written = eval_set_data(loaded)
    assert set(written) == {"eval_set_id", "eval_cases", "creation_timestamp"}
    case = written["eval_cases"][0]
    assert case["session_input"] == {"app_name": "a", "user_id": "u", "state": {"k": 1}}
    assert case["conversation"][0]["intermediate_data"]["tool_uses"] == [
        {"name": "greet", "args": {"who": "you"}}
    ]


def test_invocation_events_of_newer_adk_releases_give_the_tool_calls() -> None:
    turn = Invocation.model_validate(
        {
            "user_content": {"parts": [{"text": "x"}]},
            "intermediate_data": {
                "invocation_events": [
                    {
                        "author": "a",
                        "content": {"parts": [{"function_call": {"name": "t", "args": {}}}]},
                    }
                ]
            },
        }
    )
    assert isinstance(turn.intermediate_data, InvocationEvents)
    assert [c.name for c in turn.tool_calls()] == ["t"]


def test_fields_of_newer_releases_are_kept_on_the_case() -> None:
    case = EvalCase.model_validate(
        {"eval_id": "c", "conversation": [], "rubrics": [{"rubric_id": "r"}]}
    )
    assert eval_set_data(EvalSet(eval_set_id="s", eval_cases=[case]))["eval_cases"][0][
        "rubrics"
    ] == [{"rubric_id": "r"}]


def test_round_trip_through_the_file_text() -> None:
    original = eval_set_loads((DATA / "home_automation.evalset.json").read_text())
    again = eval_set_loads(eval_set_dump(original))
    assert again == original
    assert json.loads(eval_set_dump(original))["eval_cases"][0]["eval_id"] == "eval_case_id"


def test_the_older_list_of_turns_format_loads() -> None:
    loaded = eval_set_load(
        [
            {
                "query": "Roll a 16 sided dice for me",
                "expected_tool_use": [{"tool_name": "roll_die", "tool_input": {"sides": 16}}],
                "reference": "I rolled a 16 sided die and got 13.",
            }
        ],
        eval_set_id="dice",
    )
    (case,) = loaded.eval_cases
    assert loaded.eval_set_id == case.eval_id == "dice"
    (turn,) = case.conversation or []
    assert [(c.name, c.args) for c in turn.tool_calls()] == [("roll_die", {"sides": 16})]
    assert turn.final_response == types.Content(
        role="model", parts=[types.Part(text="I rolled a 16 sided die and got 13.")]
    )


def test_the_older_format_with_named_sessions_loads() -> None:
    loaded = eval_set_load(
        [
            {
                "name": "roll_twice",
                "data": [{"query": "What can you do?", "expected_tool_use": [], "reference": "x"}],
                "initial_session": {"state": {"k": "v"}, "app_name": "hello", "user_id": "u"},
            }
        ]
    )
    (case,) = loaded.eval_cases
    assert case.eval_id == "roll_twice"
    assert case.session_input is not None and case.session_input.state == {"k": "v"}


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ("not json", "not valid JSON"),
        ("42", "not a number"),
        ('{"eval_cases": []}', "eval_set_id: Field required"),
        ('{"eval_set_id": "s", "eval_cases": [{"eval_id": "c"}]}', "exactly one of"),
        ('{"eval_set_id": "s", "eval_cases": [{"conversation": [{}]}]}', "eval_id"),
        ('[{"nope": 1}]', "'query'"),
        ('[{"name": "x", "data": 3}]', "'data' is a list"),
        ("[" * 5000 + "]" * 5000, "not valid JSON"),
    ],
)
def test_what_is_not_an_eval_set_is_refused_with_a_reason(data: str, says: str) -> None:
    with pytest.raises(EvalSetFormatError) as caught:
        eval_set_loads(data)
    assert says in str(caught.value)


@pytest.mark.slow  # a process (or twenty) of its own: seconds
def test_evaluation_imports_without_django() -> None:
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('django', 'channels', 'daphne', 'agentdash'):\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import runtime.evaluation\n"
        "assert not any(m.split('.')[0] == 'django' for m in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
