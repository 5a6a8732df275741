"""The example agent behaves as its four callbacks say, on the offline model."""

from __future__ import annotations

from google.genai import types

from runtime import InMemoryRunner
from runtime.examples.capital import root_agent


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
