"""The capital agent: its tool and ADK's four callback examples, on the offline model."""

from __future__ import annotations

from agentdash.demo import capital
from runtime.examples import capital as example


def test_it_is_the_runtime_example_named_capital_agent() -> None:
    assert capital.root_agent is example.root_agent
    assert capital.root_agent.name == "capital_agent"
    assert capital.root_agent.model == "offline"  # no API key in the tests


def test_the_tool_is_called_and_every_callback_acts(chat) -> None:  # type: ignore[no-untyped-def]
    session = chat(capital.root_agent)
    turn = session.send("What is the capital of Canada?")
    # The model asked for Canada; before_tool changed the argument to France in place.
    assert turn.calls == [("capital_agent", "get_capital_city", {"country": "Canada"})]
    assert turn.results == [{"result": "Paris"}]
    # after_model marked the final answer; after_tool remembered the lookup in state.
    assert turn.answer.endswith("(checked by after_model)")
    assert "Paris" in turn.answer
    assert session.state["last_capital_lookup"] == "France"


def test_after_tool_annotates_washington(chat) -> None:  # type: ignore[no-untyped-def]
    turn = chat(capital.root_agent).send("What is the capital of the united states?")
    assert turn.results[0]["result"] == "Washington, D.C. (the capital of the USA)"
    assert turn.results[0]["note_added_by_callback"] is True


def test_before_model_blocks_without_calling_the_model(chat) -> None:  # type: ignore[no-untyped-def]
    session = chat(capital.root_agent)
    turn = session.send("BLOCK the capital of France")
    assert turn.calls == []
    assert "I cannot process this request" in turn.answer
    assert session.state["guardrail_block_keyword_triggered"] is True
