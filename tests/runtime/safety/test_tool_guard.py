"""ToolArgumentGuard: each rule kind, the docs' user-id check, names for the switchboard."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from runtime import FunctionTool, callback_name
from runtime.agents._callbacks import normalize
from runtime.safety import ArgumentRule, ToolArgumentGuard
from tests.runtime.safety.conftest import tool_context


def get_user_orders(user_id_param: str) -> dict[str, Any]:
    """The docs' hypothetical tool taking ``user_id_param``."""
    return {"orders": []}


def search(query: str, region: str = "eu") -> dict[str, Any]:
    """Search."""
    return {}


ORDERS = FunctionTool(get_user_orders)
SEARCH = FunctionTool(search)


def test_docs_user_id_example_blocks_a_mismatch_and_passes_a_match() -> None:
    # ADK: expected_user_id = state.get("session_user_id"); args["user_id_param"] must equal it.
    guard = ToolArgumentGuard(
        {"get_user_orders": {"user_id_param": ArgumentRule(state_key="session_user_id")}}
    )
    ctx = tool_context({"session_user_id": "u1"})
    assert guard(tool=ORDERS, args={"user_id_param": "u1"}, tool_context=ctx) is None
    assert "temp:guardrail_violation" not in ctx.state

    blocked = guard(tool=ORDERS, args={"user_id_param": "u2"}, tool_context=ctx)
    assert blocked == {
        "error": "Tool call blocked: argument 'user_id_param' does not match the session's value."
    }
    assert ctx.state["temp:guardrail_violation"] == {
        "guard": "tool-argument-guard",
        "tool": "get_user_orders",
        "argument": "user_id_param",
        "rule": "state_key",
        "reason": "argument 'user_id_param' does not match the session's value",
    }
    assert "u1" not in blocked["error"]  # the session's value is not revealed to the model


def test_state_key_fails_closed_when_either_side_is_missing() -> None:
    guard = ToolArgumentGuard(
        {"get_user_orders": {"user_id_param": ArgumentRule(state_key="session_user_id")}}
    )
    no_state = tool_context({})  # the docs' `None != None` would pass here; this blocks
    assert guard(tool=ORDERS, args={}, tool_context=no_state) is not None
    assert guard(tool=ORDERS, args={"user_id_param": None}, tool_context=no_state) is not None
    with_state = tool_context({"session_user_id": "u1"})
    assert guard(tool=ORDERS, args={}, tool_context=with_state) is not None


def test_allowed_tools() -> None:
    guard = ToolArgumentGuard(allowed_tools={"search"})
    ctx = tool_context()
    assert guard(tool=SEARCH, args={"query": "x"}, tool_context=ctx) is None
    blocked = guard(tool=ORDERS, args={"user_id_param": "u1"}, tool_context=ctx)
    assert blocked == {"error": "Tool call blocked: tool 'get_user_orders' is not allowed."}
    assert ctx.state["temp:guardrail_violation"]["rule"] == "allowed_tools"
    assert ctx.state["temp:guardrail_violation"]["argument"] is None


def test_allowed_values() -> None:
    guard = ToolArgumentGuard({"search": {"region": ArgumentRule(allowed_values=["eu", "us"])}})
    assert guard.check("search", {"query": "x", "region": "us"}, {}) is None
    assert guard.check("search", {"query": "x"}, {}) is None  # absent: the default applies
    assert guard.check("search", {"region": "cn"}, {}) == (
        "region",
        "allowed_values",
        "argument 'region' must be one of: 'eu', 'us'",
    )


def test_pattern_must_match_the_whole_string() -> None:
    guard = ToolArgumentGuard({"search": {"query": ArgumentRule(pattern=r"[a-z ]+")}})
    assert guard.check("search", {"query": "red shoes"}, {}) is None
    for bad in ["red shoes; DROP", "", 42]:
        found = guard.check("search", {"query": bad}, {})
        assert found is not None and found[1] == "pattern", bad
    with pytest.raises(ValidationError):
        ArgumentRule(pattern="(unclosed")


def test_max_length_and_the_any_wildcards() -> None:
    guard = ToolArgumentGuard({"*": {"*": ArgumentRule(max_length=5)}})
    assert guard.check("search", {"query": "short", "n": 10**9}, {}) is None
    assert guard.check("get_user_orders", {"user_id_param": "toolong"}, {}) == (
        "user_id_param",
        "max_length",
        "argument 'user_id_param' has 7 characters; at most 5",
    )


def test_required() -> None:
    guard = ToolArgumentGuard({"search": {"region": ArgumentRule(required=True)}})
    assert guard.check("search", {"query": "x"}, {}) == (
        "region",
        "required",
        "argument 'region' is required",
    )
    assert guard.check("search", {"region": "eu"}, {}) is None
    assert guard.check("get_user_orders", {}, {}) is None  # rules are per tool


def test_every_matching_rule_applies_and_the_first_broken_one_is_reported() -> None:
    guard = ToolArgumentGuard(
        {
            "*": {"query": ArgumentRule(max_length=10)},
            "search": {"query": ArgumentRule(allowed_values=["a", "much too long"])},
        }
    )
    found = guard.check("search", {"query": "much too long"}, {})
    assert found is not None and found[1] == "max_length"  # the "*" rule still applies


def test_names_default_and_distinct_for_the_switchboard() -> None:
    assert callback_name(ToolArgumentGuard()) == "tool-argument-guard"
    a = ToolArgumentGuard(name="orders-guard")
    b = ToolArgumentGuard(name="search-guard")
    assert (callback_name(a), callback_name(b)) == ("orders-guard", "search-guard")
    assert [cb.name for cb in normalize([a, b], "before_tool_callback")] == [
        "orders-guard",
        "search-guard",
    ]
    with pytest.raises(ValueError, match="must not be empty"):
        ToolArgumentGuard(name=" ")
