"""The policy kinds' config schemas: what passes, and the field message for each way to fail."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ValidationError

from agentdash.controls.policies import POLICY_KINDS, policy_validate
from runtime.guardrails import Guardrail, ToolPolicyConfig
from runtime.guardrails.kinds import GUARDRAILS

VALID: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    (
        "query",
        {"tables": ["orders"]},
        {"select_only": True, "tables": ["orders"], "max_rows": None},
    ),
    (
        "query",
        {"select_only": False, "tables": ["sales.orders", "_tmp$1"], "max_rows": 1},
        {"select_only": False, "tables": ["sales.orders", "_tmp$1"], "max_rows": 1},
    ),
    (
        "query",
        {"select_only": True, "tables": ["orders"], "max_rows": None},
        {"select_only": True, "tables": ["orders"], "max_rows": None},
    ),
    (
        "tool_guard",
        {
            "tools": {
                "lookup": {
                    "allowed_values": {"region": ["eu", "us"]},
                    "patterns": {"id": r"[0-9]{1,8}"},
                    "max_length": {"note": 0, "id": 8},
                },
                "search": {},
            }
        },
        {
            "allowed_tools": None,
            "tools": {
                "lookup": {
                    "allowed_values": {"region": ["eu", "us"]},
                    "patterns": {"id": r"[0-9]{1,8}"},
                    "max_length": {"note": 0, "id": 8},
                },
                "search": {"allowed_values": {}, "patterns": {}, "max_length": {}},
            },
        },
    ),
    ("tool_guard", {"allowed_tools": ["a", "b"]}, {"allowed_tools": ["a", "b"], "tools": {}}),
    ("query", {"tables": []}, {"select_only": True, "tables": [], "max_rows": None}),
    ("step_limits", {"max_model_calls": 1, "max_tool_calls": 500}, None),
    ("step_limits", {"max_model_calls": 3}, {"max_model_calls": 3, "max_tool_calls": None}),
    (
        "rate_limit",
        {"max_calls": 5, "window_seconds": 60},
        {"max_calls": 5, "window_seconds": 60, "tools": None, "per": "user_tool"},
    ),
    (
        "input_screen",
        {"blocked_terms": ["lawsuit"]},
        {
            "blocked_terms": ["lawsuit"],
            "blocked_patterns": [],
            "reply": "I can't help with that request.",
            "case_sensitive": False,
        },
    ),
    (
        "output_redaction",
        {"redact": ["email"], "patterns": {"order id": "ORD-[0-9]+"}},
        {"redact": ["email"], "patterns": {"order id": "ORD-[0-9]+"}, "mask": "[{label} redacted]"},
    ),
    (
        "llm_screen",
        {"screen": ["output"]},
        {"screen": ["output"], "instruction": None, "refusal": None},
    ),
]


@pytest.mark.parametrize(("kind", "config", "cleaned"), VALID)
def test_valid_configs_pass(kind: str, config: dict[str, Any], cleaned: dict | None) -> None:
    assert policy_validate(kind=kind, config=config) == (cleaned or config)


def test_every_kind_has_a_valid_example() -> None:
    assert {
        "query",
        "tool_guard",
        "rate_limit",
        "step_limits",
        "input_screen",
        "output_redaction",
        "llm_screen",
    } <= POLICY_KINDS.keys()
    for name, kind in POLICY_KINDS.items():
        policy_validate(kind=name, config=kind.example)


INVALID: list[tuple[str, Any, str, str]] = [
    # kind, config, field, a fragment of its message
    ("query", ["orders"], "config", "must be an object, not a list"),
    ("query", {}, "config.tables", "required"),
    ("query", {"tables": ["t"], "limit": 5}, "config.limit", "Unknown key"),
    ("query", {"tables": ["t"], "select_only": "yes"}, "config.select_only", "must be a boolean"),
    ("query", {"tables": "orders"}, "config.tables", "must be a list"),
    ("query", {"tables": ["orders", "x; drop table y"]}, "config.tables[1]", "not a table name"),
    ("query", {"tables": [""]}, "config.tables[0]", "not a table name"),
    ("query", {"tables": [7]}, "config.tables[0]", "must be a string, not an integer"),
    ("query", {"tables": ["t"], "max_rows": 0}, "config.max_rows", "at least 1"),
    ("query", {"tables": ["t"], "max_rows": "10"}, "config.max_rows", "must be an integer"),
    ("query", {"tables": ["t"], "max_rows": True}, "config.max_rows", "must be an integer"),
    ("query", {"tables": ["t"], "max_rows": 2.5}, "config.max_rows", "must be an integer"),
    ("tool_guard", {}, "config", "(tools) or the tools allowed (allowed_tools)"),
    ("tool_guard", "tools", "config", "must be an object"),
    ("tool_guard", {"tools": {}, "mode": "x"}, "config.mode", "Unknown key"),
    ("tool_guard", {"tools": []}, "config.tools", "must be an object, not a list"),
    ("tool_guard", {"tools": {}}, "config", "(tools) or the tools allowed (allowed_tools)"),
    ("tool_guard", {"tools": {"t": []}}, "config.tools.t", "must be an object"),
    ("tool_guard", {"tools": {"t": {"regex": {}}}}, "config.tools.t.regex", "Unknown key"),
    (
        "tool_guard",
        {"tools": {"t": {"patterns": ["a"]}}},
        "config.tools.t.patterns",
        "must be an object, not a list",
    ),
    (
        "tool_guard",
        {"tools": {"t": {"patterns": {"q": "(unclosed"}}}},
        "config.tools.t.patterns.q",
        "not a valid regular expression",
    ),
    (
        "tool_guard",
        {"tools": {"t": {"patterns": {"q": 5}}}},
        "config.tools.t.patterns.q",
        "must be a string, not an integer",
    ),
    (
        "tool_guard",
        {"tools": {"t": {"allowed_values": {"a": "eu"}}}},
        "config.tools.t.allowed_values.a",
        "must be a list, not a string",
    ),
    (
        "tool_guard",
        {"tools": {"t": {"allowed_values": {"a": []}}}},
        "config.tools.t.allowed_values.a",
        "must not be empty",
    ),
    (
        "tool_guard",
        {"tools": {"t": {"max_length": {"a": -1}}}},
        "config.tools.t.max_length.a",
        "at least 0",
    ),
    (
        "tool_guard",
        {"tools": {"t": {"max_length": {"a": "9"}}}},
        "config.tools.t.max_length.a",
        "must be an integer",
    ),
    ("tool_guard", {"tools": {" ": {}}}, "config.tools. ", "names must not be empty"),
    ("step_limits", {"max_model_calls": 0}, "config.max_model_calls", "must be at least 1"),
    ("step_limits", {"max_tool_calls": "9"}, "config.max_tool_calls", "must be an integer"),
    ("step_limits", {"max_llm_calls": 3}, "config.max_llm_calls", "Unknown key"),
    ("rate_limit", {"max_calls": 3}, "config.window_seconds", "required"),
    ("rate_limit", {"max_calls": 1, "window_seconds": 0}, "config.window_seconds", "at least 1"),
    ("rate_limit", {"max_calls": 1, "window_seconds": 9, "per": "minute"}, "config.per", "user"),
    ("rate_limit", None, "config", "must be an object, not null"),
    (
        "input_screen",
        {"blocked_terms": "x"},
        "config.blocked_terms",
        "must be a list, not a string",
    ),
    ("input_screen", {"blocked_terms": [""]}, "config.blocked_terms[0]", "must not be empty"),
    ("input_screen", {"blocked_patterns": ["("]}, "config.blocked_patterns", "not valid"),
    ("input_screen", {"reply": ""}, "config.reply", "must not be empty"),
    ("output_redaction", {"redact": ["ssn"]}, "config.redact[0]", "'card', 'key'"),
    ("output_redaction", {"patterns": {"x": "a*"}}, "config.patterns", "empty string"),
    ("llm_screen", {"screen": ["everything"]}, "config.screen[0]", "'input'"),
    (
        "tool_guard",
        {"allowed_tools": "run_query"},
        "config.allowed_tools",
        "must be a list, not a string",
    ),
    ("no_such_kind", {}, "kind", "Unknown policy kind 'no_such_kind'"),
]


@pytest.mark.parametrize(("kind", "config", "field", "fragment"), INVALID)
def test_invalid_configs_name_the_field(kind: str, config: Any, field: str, fragment: str) -> None:
    with pytest.raises(ValidationError) as caught:
        policy_validate(kind=kind, config=config)
    errors = caught.value.message_dict
    assert field in errors, errors
    assert any(fragment in message for message in errors[field]), errors[field]


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(ValidationError) as caught:
        policy_validate(
            kind="query", config={"select_only": 1, "tables": ["ok", "not ok"], "extra": 1}
        )
    assert set(caught.value.message_dict) == {
        "config.select_only",
        "config.tables[1]",
        "config.extra",
    }


def _subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub} | _subclasses(sub)
    return found


def test_every_runtime_guardrail_is_a_kind_checked_by_its_own_config_model() -> None:
    """One definition: the runtime's guardrail classes and config models make the kinds."""
    import runtime.guardrails
    import runtime.safety

    runtime_guardrails = {
        cls for cls in _subclasses(Guardrail) if cls.__module__.startswith("runtime.")
    }
    assert set(GUARDRAILS) == runtime_guardrails, (
        "list a new guardrail in runtime/guardrails/kinds.py"
    )
    assert len({g.kind for g in GUARDRAILS}) == len(GUARDRAILS)
    for guard in (*GUARDRAILS, None):
        kind = "query" if guard is None else guard.kind
        model = runtime.safety.QueryPolicy if guard is None else guard.Config
        example = POLICY_KINDS[kind].example
        assert policy_validate(kind=kind, config=example) == model.model_validate(
            example
        ).model_dump(mode="json")
    assert runtime.guardrails  # imported for its subclasses


def test_tool_guard_config_becomes_runtime_guard_rules() -> None:
    config = policy_validate(kind="tool_guard", config=VALID[3][1])
    guard = ToolPolicyConfig.model_validate(config).guard()
    assert guard.rules["lookup"]["id"].pattern == r"[0-9]{1,8}"
    assert guard.rules["lookup"]["id"].max_length == 8
    assert guard.check("lookup", {"id": "123", "region": "eu"}, {}) is None
    assert guard.check("lookup", {"id": "12a"}, {})[1] == "pattern"
    assert guard.check("lookup", {"region": "mars"}, {})[1] == "allowed_values"
    assert guard.check("lookup", {"note": "x"}, {})[1] == "max_length"
