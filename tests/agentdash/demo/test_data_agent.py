"""The data agent: SQL over its own database, under the policy stored in the database."""

from __future__ import annotations

import pytest

from agentdash.controls.models import Policy
from agentdash.demo import data_agent
from agentdash.demo.policies import DEFAULT_QUERY_POLICY, PolicyUnavailableError, query_policy_for

# The tool runs in a worker thread with its own database connection: it only sees committed
# rows, hence transaction=True.
pytestmark = pytest.mark.django_db(transaction=True)

SELECT_CUSTOMERS = 'Run this query sql: "SELECT name, city FROM customers ORDER BY id LIMIT 5"'
SELECT_SALARIES = 'Run this query sql: "SELECT * FROM salaries"'
UPDATE_CUSTOMERS = "Run this query sql: \"UPDATE customers SET city = 'Paris' WHERE id = 1\""
SELECT_ORDERS = 'Run this query sql: "SELECT product FROM orders LIMIT 5"'


def attach_policy(**config: object) -> Policy:
    return Policy.objects.create(
        name="data agent queries", kind="query", config=config, agents=["data_agent"]
    )


def test_a_select_on_customers_works(chat) -> None:  # type: ignore[no-untyped-def]
    turn = chat(data_agent.root_agent).send(SELECT_CUSTOMERS)
    assert turn.calls == [
        ("data_agent", "run_query", {"sql": "SELECT name, city FROM customers ORDER BY id LIMIT 5"})
    ]
    assert turn.results[0]["rows"][:2] == [["Alice Martin", "Lyon"], ["Bob Chen", "Toronto"]]
    assert "Alice Martin" in turn.answer


def test_salaries_and_writes_are_refused_with_the_policy_message(chat) -> None:  # type: ignore[no-untyped-def]
    session = chat(data_agent.root_agent)
    salaries = session.send(SELECT_SALARIES)
    assert salaries.results == [
        {"error": "Error: Query targets unauthorized tables: salaries. Allowed: customers, orders"}
    ]
    assert "unauthorized tables: salaries" in salaries.answer
    update = session.send(UPDATE_CUSTOMERS)
    assert update.results == [
        {"error": "Error: only SELECT queries are allowed; this one starts with UPDATE."}
    ]


def test_the_next_query_obeys_a_policy_changed_in_the_database(chat) -> None:  # type: ignore[no-untyped-def]
    session = chat(data_agent.root_agent)
    assert "rows" in session.send(SELECT_ORDERS).results[0]

    policy = attach_policy(select_only=True, tables=["customers"])
    refused = session.send(SELECT_ORDERS).results[0]
    assert refused == {
        "error": "Error: Query targets unauthorized tables: orders. Allowed: customers"
    }

    policy.config = {"select_only": False, "tables": ["customers"]}
    policy.save()
    assert session.send(UPDATE_CUSTOMERS).results[0] == {"result": "1 row(s) changed."}
    assert "salaries" in session.send(SELECT_SALARIES).results[0]["error"]

    policy.config = {"select_only": True, "tables": ["customers"], "max_rows": 2}
    policy.save()
    assert "at most 2" in session.send(SELECT_CUSTOMERS).results[0]["error"]


def test_query_policy_for_falls_back_to_the_safe_default() -> None:
    assert query_policy_for("data_agent").model_dump(exclude_none=True) == DEFAULT_QUERY_POLICY
    Policy.objects.create(
        name="someone else's", kind="query", config={"tables": ["salaries"]}, agents=["other"]
    )
    Policy.objects.create(
        name="disabled",
        kind="query",
        config={"tables": ["salaries"]},
        agents=["data_agent"],
        enabled=False,
    )
    Policy.objects.create(name="not a query policy", kind="rate_limit", agents=["data_agent"])
    assert query_policy_for("data_agent").tables == ["customers", "orders"]


def test_an_invalid_stored_policy_refuses_every_query(chat) -> None:  # type: ignore[no-untyped-def]
    attach_policy(tables="customers")
    with pytest.raises(PolicyUnavailableError, match="'data_agent' is invalid"):
        query_policy_for("data_agent")
    result = chat(data_agent.root_agent).send(SELECT_CUSTOMERS).results[0]
    assert result["error"].startswith("Error: no query was run: the query policy")


def test_sqlite_enforces_the_policy_even_when_the_check_is_bypassed(
    monkeypatch: pytest.MonkeyPatch, chat
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr("runtime.safety.QueryPolicy.check", lambda self, sql: None)
    session = chat(data_agent.root_agent)
    assert "database refused" in session.send(SELECT_SALARIES).results[0]["error"]
    assert "database refused" in session.send(UPDATE_CUSTOMERS).results[0]["error"]
