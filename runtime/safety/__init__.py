"""Guardrails from ADK's safety guide: in-tool policies, argument guards, a model as a screen.

- :class:`QueryPolicy` / :func:`check_query`: an in-tool guardrail for query tools, with the
  policy read from session state (``query_tool_policy``); missing or malformed → deny.
- :class:`ToolArgumentGuard`: a ``before_tool_callback`` built from per-tool argument rules.
- :class:`LlmScreen`: ``before_model`` / ``before_tool`` callbacks asking a cheap model
  whether an input is safe, failing closed.
"""

from runtime.safety.llm_screen import DEFAULT_SCREEN_INSTRUCTION, LlmScreen, parse_verdict
from runtime.safety.query_policy import (
    InvalidQueryPolicyError,
    QueryPolicy,
    check_query,
    query_policy_from_state,
)
from runtime.safety.sql import ParsedSql, UnsupportedSqlError, parse_sql
from runtime.safety.tool_guard import ArgumentRule, ToolArgumentGuard

__all__ = [
    "DEFAULT_SCREEN_INSTRUCTION",
    "ArgumentRule",
    "InvalidQueryPolicyError",
    "LlmScreen",
    "ParsedSql",
    "QueryPolicy",
    "ToolArgumentGuard",
    "UnsupportedSqlError",
    "check_query",
    "parse_sql",
    "parse_verdict",
    "query_policy_from_state",
]
