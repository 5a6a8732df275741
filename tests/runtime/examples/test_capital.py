"""The example agent behaves as its four callbacks say, on the offline model."""

from __future__ import annotations

import json

from google.genai import types

from runtime import InMemoryRunner
from runtime.examples.capital import INSTRUCTION, root_agent
from runtime.telemetry.attributes import GenAI


def ask(runner: InMemoryRunner, session_id: str, text: str) -> list:
    message = types.Content(role="user", parts=[types.Part(text=text)])
    return list(runner.run(user_id="u", session_id=session_id, new_message=message))


def test_capital_agent_callbacks_on_the_offline_model() -> None:
    runner = InMemoryRunner(root_agent, app_name="capitals")
    session = runner.session_service.create_session(app_name="capitals", user_id="u")
    events = ask(runner, session.id, "What is the capital of Canada?")
    responses = [r.response for e in events for r in e.get_function_responses()]
    assert responses == [{"result": "Paris"}]  # before_tool redirected Canada to France
    assert events[-1].text.endswith("(checked by after_model)")
    blocked = ask(runner, session.id, "please BLOCK this")
    # The guardrail's answer stands as it is: after_model does not run for a skipped call.
    assert [e.text for e in blocked] == ["I cannot process this request: it contains 'BLOCK'."]
    usa = ask(runner, session.id, "capital of the United States")
    note = next(r.response for e in usa for r in e.get_function_responses())
    assert note["note_added_by_callback"] is True
    state = runner.session_service.get_session(
        app_name="capitals", user_id="u", session_id=session.id
    ).state
    assert state["last_capital_lookup"] == "United States"
    assert state["guardrail_block_keyword_triggered"] is True
    assert state["last_answer"] == usa[-1].text


def test_the_instruction_shows_the_last_lookup_from_state(spans) -> None:  # type: ignore[no-untyped-def]
    """What the timeline shows of each model call: before the session's first lookup the
    instruction says there was none (it used to end "was ." on every first call), after it
    it names the country looked up."""
    runner = InMemoryRunner(root_agent, app_name="capitals")
    session = runner.session_service.create_session(app_name="capitals", user_id="u")
    ask(runner, session.id, "What is the capital of Canada?")
    ask(runner, session.id, "And Japan?")

    def instruction(span: object) -> str:
        raw = span.attributes[GenAI.SYSTEM_INSTRUCTIONS]  # type: ignore[attr-defined]
        return json.loads(raw)[0]["content"].split("\n\n")[0]

    model_calls = [s for s in spans.get_finished_spans() if s.name.startswith("generate_content")]
    shown = [instruction(s) for s in sorted(model_calls, key=lambda s: s.start_time)]
    base = INSTRUCTION
    assert shown == [
        f"{base} No country has been looked up yet in this session.",
        f"{base} The last country looked up was France.",  # Canada, redirected by before_tool
        f"{base} The last country looked up was France.",
        f"{base} The last country looked up was Japan.",  # "And Japan?" looked Japan up
    ]
    assert all(not s.endswith(" .") and "was ." not in s for s in shown)
