"""The data agent's query tool acts as the user who owns the session: the shop it queries
holds only that user's customers and their orders, whatever SQL the model writes.

Runs the real demo agent (offline model) for real users; the session's user id is the
user's pk as a string, as ``runs.services.session_start`` stores it."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from google.genai import types

from agentdash.agent_sessions.models import SessionEvent
from agentdash.demo import data_agent
from agentdash.runs.models import Run
from agentdash.runs.services import session_start
from agentdash.runs.worker import run_execute
from runtime import Agent, FunctionTool
from tests.agentdash.demo.conftest import Chat
from tests.agentdash.recording_executor import RecordingExecutor

# The tool runs in a worker thread with its own database connection: it only sees committed
# rows (the users), hence transaction=True.
pytestmark = pytest.mark.django_db(transaction=True)

ALICE_ROW = [1, "Alice Martin", "alice@example.com", "Lyon", "alice"]
BOB_ROW = [2, "Bob Chen", "bob@example.com", "Toronto", "bob"]
ALICE_ORDERS = [[1, 1, "keyboard", 89.0, "2026-09-14"], [2, 1, "monitor", 249.0, "2026-10-02"]]
BOB_ORDERS = [[3, 2, "headset", 59.5, "2026-10-20"]]


def query(sql: str, *, user_id: str, agent: Any = None) -> dict[str, Any]:
    """What run_query returned for ``sql`` in a session of ``user_id``."""
    turn = Chat(agent or data_agent.root_agent, user_id=user_id).send(
        f'Run this query sql: "{sql}"'
    )
    assert [call[1:] for call in turn.calls] == [("run_query", {"sql": sql})]
    (result,) = turn.results
    return result


def rows(sql: str, user: User) -> list[list[Any]]:
    found = query(sql, user_id=str(user.pk))
    assert "error" not in found, found
    return list(found["rows"])


def test_the_tool_is_declared_as_acting_as_the_user() -> None:
    (tool,) = data_agent.root_agent.tools  # the plain function, made a FunctionTool
    assert isinstance(tool, FunctionTool) and tool.func is data_agent.run_query
    assert tool.identity == "user"


def test_bob_sees_only_his_customer_and_his_orders(bob: User, alice: User) -> None:
    customers = query("SELECT * FROM customers", user_id=str(bob.pk))
    assert customers["columns"] == ["id", "name", "email", "city", "owner"]
    assert customers["rows"] == [BOB_ROW]
    assert rows("SELECT * FROM orders", bob) == BOB_ORDERS
    assert rows("SELECT COUNT(*) FROM customers", bob) == [[1]]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM customers WHERE name = 'Alice Martin'",
        "SELECT * FROM customers WHERE owner = 'alice' OR 1 = 1 AND owner <> 'bob'",
        "SELECT * FROM orders WHERE customer_id = 1",
        "SELECT o.product FROM orders o JOIN customers c ON c.id = o.customer_id "
        "WHERE c.owner = 'alice'",
        "SELECT * FROM customers WHERE id <> 2",
    ],
)
def test_no_query_of_bob_reaches_alices_rows(bob: User, alice: User, sql: str) -> None:
    assert rows(sql, bob) == []


def test_alice_sees_only_hers(alice: User, bob: User) -> None:
    assert rows("SELECT * FROM customers", alice) == [ALICE_ROW]
    assert rows("SELECT * FROM orders", alice) == ALICE_ORDERS
    assert rows("SELECT * FROM customers WHERE name = 'Bob Chen'", alice) == []


@pytest.mark.parametrize("user_id", ["999999", "u1", "", "alice", "1 OR 1=1"])
def test_a_user_id_that_names_no_user_sees_an_empty_shop(alice: User, user_id: str) -> None:
    found = query("SELECT * FROM customers", user_id=user_id)
    assert found == {
        "columns": ["id", "name", "email", "city", "owner"],
        "rows": [],
        "row_count": 0,
    }


def test_the_tool_given_to_an_agent_as_the_agent_sees_nothing(bob: User) -> None:
    """Declared to act as the agent, the tool's principal is the service, which owns no
    customers: the data stays the users'."""
    from runtime import OfflineLlm

    agent = Agent(
        name="data_agent",
        model=OfflineLlm(),
        tools=[FunctionTool(data_agent.run_query, identity="agent")],
    )
    assert query("SELECT * FROM customers", user_id=str(bob.pk), agent=agent)["rows"] == []


def test_the_policy_still_refuses_before_any_user_lookup(bob: User) -> None:
    found = query("SELECT * FROM salaries", user_id=str(bob.pk))
    assert "unauthorized tables: salaries" in found["error"]


async def test_a_chat_bob_starts_runs_the_query_as_bob(
    bob: User, alice: User, recorder: RecordingExecutor
) -> None:
    """The real path: the chat's session belongs to bob (user id = his pk), the worker runs
    it, and the stored tool result holds his rows only."""
    start = sync_to_async(session_start)
    run: Run = await start(
        agent_name="data_agent",
        text='Run this query sql: "SELECT name, city FROM customers"',
        requested_by=bob,
    )
    assert recorder.submitted == [run.pk]
    await run_execute(run.pk, worker="w1")

    stored = await Run.objects.aget(pk=run.pk)
    assert stored.status == Run.Status.SUCCEEDED, stored.error
    events = [
        types.Content.model_validate(data["content"])
        async for data in SessionEvent.objects.filter(session_id=run.session_id)
        .order_by("seq")
        .values_list("data", flat=True)
        if data.get("content")
    ]
    responses = [
        p.function_response.response for c in events for p in c.parts or [] if p.function_response
    ]
    assert responses == [
        {"columns": ["name", "city"], "rows": [["Bob Chen", "Toronto"]], "row_count": 1}
    ]
