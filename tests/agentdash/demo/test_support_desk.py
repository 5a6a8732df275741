"""The support desk hands customers to billing and tech, on the offline model."""

from __future__ import annotations

from agentdash.demo import support_desk
from agentdash.demo.support_desk import check_service_status, lookup_invoice


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
