"""Guardrails from ADK's safety guide as building blocks: in-tool policies, argument guards.

- :class:`QueryPolicy` / :func:`check_query`: an in-tool guardrail for query tools, with the
  policy read from session state (``query_tool_policy``); missing or malformed → deny.
- :class:`ToolArgumentGuard`: a ``before_tool_callback`` built from per-tool argument rules.

The model as a screen, ``LlmScreen``, is a policy-driven guardrail: it lives in
:mod:`runtime.guardrails`, which builds on this package (``from runtime import LlmScreen``).
"""

from runtime.safety.query_policy import (
    InvalidQueryPolicyError,
    QueryPolicy,
    check_query,
    query_policy_from_state,
)
from runtime.safety.sql import ParsedSql, UnsupportedSqlError, parse_sql
from runtime.safety.tool_guard import ArgumentRule, ToolArgumentGuard

__all__ = [
    "ArgumentRule",
    "InvalidQueryPolicyError",
    "ParsedSql",
    "QueryPolicy",
    "ToolArgumentGuard",
    "UnsupportedSqlError",
    "check_query",
    "parse_sql",
    "query_policy_from_state",
]
