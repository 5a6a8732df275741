"""The support desk hands customers to billing and tech, on the offline model: by the words
of their descriptions, and each answers with one of its tools."""

from __future__ import annotations

import pytest

from agentdash.demo import support_desk
from agentdash.demo.support_desk import (
    billing_policy,
    check_service_status,
    lookup_invoice,
    search_known_issues,
)

# The guardrails read their policies from the database (none here: no limits apply).
pytestmark = pytest.mark.django_db(transaction=True)


def test_a_billing_question_is_transferred_and_answered(chat) -> None:  # type: ignore[no-untyped-def]
    session = chat(support_desk.root_agent)
    turn = session.send("I have a billing question about invoice INV-1002")
    assert [(author, tool) for author, tool, _ in turn.calls] == [
        ("support_desk", "transfer_to_agent"),
        ("billing_agent", "lookup_invoice"),
    ]
    assert turn.calls[0][2] == {"agent_name": "billing_agent"}
    assert turn.events[-1].author == "billing_agent"
    assert "75.50 EUR" in turn.answer and "overdue" in turn.answer

    # The billing agent keeps the conversation for the next question.
    follow_up = session.send("And invoice 1001?")
    assert follow_up.calls == [("billing_agent", "lookup_invoice", {"invoice_number": "1001"})]
    assert "paid" in follow_up.answer


def test_a_tech_problem_goes_to_the_tech_agent(chat) -> None:  # type: ignore[no-untyped-def]
    turn = chat(support_desk.root_agent).send("Tech trouble: what is the status of the vpn?")
    assert [(author, tool) for author, tool, _ in turn.calls] == [
        ("support_desk", "transfer_to_agent"),
        ("tech_agent", "check_service_status"),
    ]
    assert turn.results[-1]["service"] == "vpn"
    assert "degraded" in turn.answer


def test_the_desk_counts_visits_in_user_state(chat) -> None:  # type: ignore[no-untyped-def]
    session = chat(support_desk.root_agent, user_id="carol")
    session.send("Hello")
    assert session.state["user:visits"] == 1
    first_seen = session.state["user:first_seen"]
    # user: keys are shared by the user's sessions of the app; a new session sees them.
    session.new_session()
    session.send("Hello again")
    assert session.state["user:visits"] == 2
    assert session.state["user:first_seen"] == first_seen


def test_the_tools_take_loose_input() -> None:
    assert lookup_invoice("INV-1003")["amount"] == "42.00 EUR"
    assert "error" in lookup_invoice("the one from last week")
    assert check_service_status("is EMAIL up")["status"] == "operational"
    assert "Known: email, vpn, website, api" in check_service_status("printer")["error"]


WORDS = {
    "I have a question about my invoice": ("billing_agent", "lookup_invoice"),
    "Can I get a refund?": ("billing_agent", "billing_policy"),
    "I was charged twice this month": ("billing_agent", "billing_policy"),
    "My card payment failed": ("billing_agent", "billing_policy"),
    "I get an error when I open the app": ("tech_agent", "search_known_issues"),
    "The desktop app crashes at start": ("tech_agent", "search_known_issues"),
    "I think I found a bug": ("tech_agent", "search_known_issues"),
    "I cannot log in since this morning": ("tech_agent", "search_known_issues"),
    "Is the vpn down?": ("tech_agent", "check_service_status"),
}


@pytest.mark.parametrize("question", WORDS)
def test_matching_words_transfer_and_the_agent_answers_with_its_tool(chat, question: str) -> None:  # type: ignore[no-untyped-def]
    agent, tool = WORDS[question]
    turn = chat(support_desk.root_agent).send(question)
    assert [(author, name) for author, name, _ in turn.calls] == [
        ("support_desk", "transfer_to_agent"),
        (agent, tool),
    ]
    assert turn.calls[0][2] == {"agent_name": agent}
    assert turn.events[-1].author == agent
    assert turn.answer.startswith(f"Offline model: `{tool}(")
    assert "you said" not in turn.answer


def test_the_answers_are_the_ones_the_tools_give(chat) -> None:  # type: ignore[no-untyped-def]
    session = chat(support_desk.root_agent)
    assert "card pre-authorisation" in session.send("I was charged twice").answer
    # Now with billing; a login problem goes on to tech (a peer), which knows the issue.
    login = session.send("I also cannot log in after changing my password")
    assert [(a, t) for a, t, _ in login.calls] == [
        ("billing_agent", "transfer_to_agent"),
        ("tech_agent", "search_known_issues"),
    ]
    assert "sign out on every device" in login.answer


def test_words_that_fit_any_desk_do_not_transfer(chat) -> None:  # type: ignore[no-untyped-def]
    turn = chat(support_desk.root_agent).send("Hello, I have a question and need some help")
    assert turn.calls == []
    assert turn.answer.startswith('Offline model: you said "Hello, I have a question')
    assert turn.answer.endswith(
        "Nothing I can call matched your words (agents: billing_agent, tech_agent)."
    )


def test_the_general_tools_answer_what_they_do_not_know() -> None:
    assert "Give its number" in lookup_invoice("")["error"]
    assert "refunds, charges shown twice" in billing_policy("what about vouchers")["result"]
    assert "No known issue matches" in search_known_issues("the printer is purple")["result"]
    assert search_known_issues("it crashed")["workaround"].startswith("update to 4.2.1")
