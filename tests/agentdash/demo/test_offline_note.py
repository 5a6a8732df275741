"""Every answer the offline model gives in a demo says so, once, the same way."""

from __future__ import annotations

import pytest

from agentdash.demo import capital, data_agent, support_desk

# The data agent's tool reads its policy from the database, from a worker thread.
pytestmark = pytest.mark.django_db(transaction=True)

CONVERSATIONS = {
    "capital": (capital.root_agent, ["What is the capital of France?", "And Japan?", "hello"]),
    "support desk": (
        support_desk.root_agent,
        ["hello", "I was charged twice", "And invoice 1002?", "The app crashes", "thanks"],
    ),
    "data agent": (
        data_agent.root_agent,
        ["How many customers do we have?", "delete all customers", "hello", "Show all tables"],
    ),
}


@pytest.mark.parametrize("demo", CONVERSATIONS)
def test_every_answer_starts_by_saying_it_is_offline(chat, demo: str) -> None:  # type: ignore[no-untyped-def]
    agent, messages = CONVERSATIONS[demo]
    session = chat(agent)
    for message in messages:
        answer = session.send(message).answer
        assert answer.startswith("Offline model: "), (message, answer)
        assert answer.count("Offline model") == 1, (message, answer)


HOSTILE = {
    "nul": "What is the capital\x00 of France? I was charged\x00 twice",
    "surrogate": "capital of \ud800 and an error \udfff",
    "markup": "<script>alert(1)</script> capital of <img src=x onerror=alert(1)> invoice",
    "huge": "capital of France and my invoice " * 3000,
    "deeply nested": "[" * 5000 + "refund" + "]" * 5000,
    "injection": "'); DROP TABLE customers; -- capital of France, my login fails",
}


@pytest.mark.parametrize("demo", CONVERSATIONS)
@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_messages_get_a_clear_answer(chat, demo: str, name: str) -> None:  # type: ignore[no-untyped-def]
    agent, _ = CONVERSATIONS[demo]
    session = chat(agent)
    answer = session.send(HOSTILE[name]).answer
    assert answer.startswith("Offline model: "), answer[:300]
    # and the demo goes on answering
    assert session.send("hello").answer.startswith("Offline model: ")
