"""README's guardrails walk-through, as the demo ``operator`` it logs in as: the data agent
lists customer names and e-mails, and the e-mail in the answer is masked by the demo's
output-redaction policy (the tool's own result keeps it). The operator owns customers of
its own in the demo shop — the tool acts as the chatting user — so the answer has rows."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from agentdash.demo import data_agent
from agentdash.demo.seed import DEMO_OPERATOR, demo_seed
from tests.agentdash.demo.conftest import Chat

# The tool looks the user up in a worker thread with its own connection: committed rows only.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def seeded(settings: Any) -> None:
    settings.DEBUG = True  # seed_demo runs in development only
    settings.AGENTDASH = {**settings.AGENTDASH, "DEMO_PASSWORD": ""}
    demo_seed()


def test_the_operators_e_mail_question_shows_rows_with_the_e_mail_masked(seeded: None) -> None:
    operator = User.objects.get(username=DEMO_OPERATOR)
    turn = Chat(data_agent.root_agent, user_id=str(operator.pk)).send(
        "List customer names and emails"
    )
    (result,) = turn.results
    assert result["columns"] == ["name", "email"] and result["row_count"] >= 1
    emails = [row[1] for row in result["rows"]]
    assert all("@" in e for e in emails)  # the tool's own result, as it returned it
    assert "no rows" not in turn.answer
    assert "[e-mail redacted]" in turn.answer
    assert not any(e in turn.answer for e in emails)
    for name, _ in result["rows"]:
        assert name in turn.answer


@pytest.mark.parametrize("login", ["alice", "bob", DEMO_OPERATOR])
def test_every_demo_login_that_chats_has_customers_of_its_own(seeded: None, login: str) -> None:
    user = User.objects.get(username=login)
    turn = Chat(data_agent.root_agent, user_id=str(user.pk)).send(
        'Run this query sql: "SELECT owner FROM customers"'
    )
    (result,) = turn.results
    assert result["rows"] and {row[0] for row in result["rows"]} == {login}
