"""QueryPolicy.check and the policy read from session state (missing or malformed → deny)."""

from __future__ import annotations

from typing import Any

import pytest

from runtime import State
from runtime.safety import (
    InvalidQueryPolicyError,
    QueryPolicy,
    check_query,
    query_policy_from_state,
)

DOCS_POLICY = {"select_only": True, "tables": ["mytable1", "mytable2"]}  # ADK's example


def test_allowed_tables_pass_and_others_are_named_in_the_error() -> None:
    policy = QueryPolicy(tables=["mytable1", "mytable2"])
    assert policy.check("SELECT * FROM mytable1 JOIN MyTable2 USING (id)") is None
    error = policy.check("SELECT * FROM mytable1 JOIN salaries ON true")
    assert error is not None
    assert error.startswith("Error: Query targets unauthorized tables: salaries.")
    assert "Allowed: mytable1, mytable2" in error


def test_schema_qualified_names_are_compared_whole() -> None:
    policy = QueryPolicy(tables=["sales.orders", "items"])
    assert policy.check('SELECT * FROM Sales.Orders JOIN "items" ON true') is None
    assert "unauthorized tables: orders" in (policy.check("SELECT * FROM orders") or "")
    assert "hr.items" in (policy.check("SELECT * FROM hr.items") or "")


def test_no_tables_allowed_means_only_table_free_queries() -> None:
    policy = QueryPolicy(tables=[])
    assert policy.check("SELECT 1 + 1") is None
    assert "Allowed: (none defined)" in (policy.check("SELECT * FROM t") or "")


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE mytable1 SET a = 1",
        "INSERT INTO mytable1 VALUES (1)",
        "DELETE FROM mytable1",
        "DROP TABLE mytable1",
        "(SELECT * FROM mytable1)",
    ],
)
def test_select_only_refuses_statements_that_do_not_start_with_select(sql: str) -> None:
    error = QueryPolicy(tables=["mytable1"]).check(sql)
    assert error is not None and error.startswith("Error: only SELECT queries are allowed")


@pytest.mark.parametrize(
    ("sql", "keyword"),
    [
        ("WITH gone AS (DELETE FROM mytable1 RETURNING *) SELECT * FROM gone", "DELETE"),
        ("SELECT * INTO mytable2 FROM mytable1", "INTO"),
        ("SELECT * FROM mytable1 FOR UPDATE", "UPDATE"),
    ],
)
def test_select_only_refuses_writes_hidden_in_a_select(sql: str, keyword: str) -> None:
    error = QueryPolicy(tables=["mytable1", "mytable2"]).check(sql)
    assert error == f"Error: only read-only SELECT queries are allowed; found {keyword}."


def test_without_select_only_writes_to_allowed_tables_pass() -> None:
    policy = QueryPolicy(select_only=False, tables=["mytable1"])
    assert policy.check("UPDATE mytable1 SET a = 1 WHERE id = 2") is None
    assert policy.check("INSERT INTO mytable1 (a) VALUES ('x')") is None
    assert "unauthorized tables: other" in (policy.check("DELETE FROM other") or "")
    assert "not DROP" in (policy.check("DROP TABLE mytable1") or "")


def test_unreadable_and_multiple_statements_are_refused_for_the_model() -> None:
    policy = QueryPolicy(tables=["t"])
    error = policy.check("SELECT * FROM t /* ok */; DROP TABLE t")
    assert (
        error == "Error: query refused: only one statement is allowed; remove every ';' inside it."
    )


def test_max_rows_requires_a_small_enough_top_level_limit() -> None:
    policy = QueryPolicy(tables=["t"], max_rows=100)
    assert policy.check("SELECT * FROM t LIMIT 100") is None
    assert policy.check("SELECT * FROM t ORDER BY a FETCH FIRST 5 ROWS ONLY") is None
    for sql in ["SELECT * FROM t", "SELECT * FROM t LIMIT 101", "SELECT * FROM t LIMIT ALL"]:
        assert policy.check(sql) == "Error: the query must end with LIMIT n, with n at most 100."


def test_the_policy_model_is_strict() -> None:
    for bad in [
        {"tables": "mytable1"},  # a string is not a list
        {"tables": ["t"], "select_only": "yes"},  # no coercion
        {"tables": ["t"], "max_rows": 0},
        {"tables": ["  "]},
        {"tables": ["t"], "select_onyl": False},  # a typo is an error, not ignored
        {"select_only": True},  # tables are required
    ]:
        with pytest.raises(ValueError):
            QueryPolicy.model_validate(bad)


# --- the policy in session state -----------------------------------------------------------


def test_reading_the_docs_policy_from_state() -> None:
    policy = query_policy_from_state({"query_tool_policy": DOCS_POLICY})
    assert policy == QueryPolicy(select_only=True, tables=["mytable1", "mytable2"])
    state = State({"query_tool_policy": DOCS_POLICY}, {})  # what tool_context.state is
    assert query_policy_from_state(state) == policy
    assert query_policy_from_state({"p": policy}, key="p") is policy


def test_a_missing_policy_is_none_and_check_query_denies() -> None:
    assert query_policy_from_state({}) is None
    assert query_policy_from_state({"query_tool_policy": None}) is None
    error = check_query({}, "SELECT * FROM mytable1")
    assert error == (
        "Error: queries are disabled: no query policy is set (state['query_tool_policy'])."
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("select_only", "must be a dict, not str"),
        (["mytable1"], "must be a dict, not list"),
        ({"select_only": True}, "tables: Field required"),
        ({"tables": ["t"], "max_rows": "10"}, "max_rows: Input should be a valid integer"),
        ({"tables": ["t"], "extra": 1}, "extra: Extra inputs are not permitted"),
    ],
)
def test_a_malformed_policy_is_a_clear_error_and_denies(value: Any, message: str) -> None:
    state = {"query_tool_policy": value}
    with pytest.raises(InvalidQueryPolicyError, match=message):
        query_policy_from_state(state)
    error = check_query(state, "SELECT 1")
    assert error is not None and error.startswith("Error: queries are disabled: state[")
    assert message in error


def test_check_query_applies_the_stored_policy() -> None:
    state = {"query_tool_policy": DOCS_POLICY}
    assert check_query(state, "SELECT * FROM mytable2") is None
    assert "unauthorized" in (check_query(state, "SELECT * FROM users") or "")
    other = {"policies/q": {"tables": ["users"]}}
    assert check_query(other, "SELECT * FROM users", key="policies/q") is None
