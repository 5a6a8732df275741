"""Policy kinds and their config schemas, checked in plain Python.

Each kind has a validator that takes the raw config (parsed JSON) and returns the cleaned
config, or reports every problem it finds under a path (``config.tables[1]``,
``config.tools.search.patterns.q``). The ``query`` kind mirrors the fields of
``runtime.safety.QueryPolicy`` and ``tool_guard`` the rules of ``runtime.guardrails
.ToolPolicy``; the other guardrails' kinds are validated by their own config models, so a
config accepted here is one the runtime accepts too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from agentdash.core.hygiene import value_problem
from runtime.guardrails import (
    InputScreenConfig,
    OutputRedactionConfig,
    RateLimitConfig,
    StepLimitsConfig,
)
from runtime.safety.llm_screen import LlmScreenConfig

__all__ = [
    "POLICY_KINDS",
    "PolicyKind",
    "PolicyProblems",
    "policy_kind_register",
    "policy_validate",
]

# A table name as SQL writes it unquoted, optionally schema-qualified (``sales.orders``).
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)*$")


class PolicyProblems:
    """Collects messages per path; raises them all at once as a field-keyed ValidationError."""

    def __init__(self) -> None:
        self.by_path: dict[str, list[str]] = {}

    def add(self, path: str, message: str) -> None:
        self.by_path.setdefault(path, []).append(message)

    def raise_if_any(self) -> None:
        if self.by_path:
            raise ValidationError(
                {
                    path: [ValidationError(message, code="invalid") for message in messages]
                    for path, messages in self.by_path.items()
                }
            )


def _type_name(value: Any) -> str:
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def _is_int(value: Any) -> bool:
    # JSON has no separate boolean-as-int: ``true`` is never a count.
    return isinstance(value, int) and not isinstance(value, bool)


def _keys(
    problems: PolicyProblems,
    path: str,
    config: Any,
    *,
    required: set[str],
    optional: set[str],
) -> bool:
    """Check ``config`` is an object with exactly the allowed keys; False when not an object."""
    if not isinstance(config, dict):
        problems.add(path, f"must be an object, not {_type_name(config)}.")
        return False
    for key in sorted(required - config.keys()):
        problems.add(f"{path}.{key}", "This key is required.")
    for key in sorted(config.keys() - required - optional):
        allowed = ", ".join(sorted(required | optional))
        problems.add(f"{path}.{key}", f"Unknown key. Allowed keys: {allowed}.")
    return True


def _count(problems: PolicyProblems, path: str, value: Any, *, minimum: int) -> None:
    if not _is_int(value):
        problems.add(path, f"must be an integer, not {_type_name(value)}.")
    elif value < minimum:
        problems.add(path, f"must be at least {minimum}.")


def _validate_query(config: Any, problems: PolicyProblems) -> dict[str, Any]:
    path = "config"
    if not _keys(problems, path, config, required={"tables"}, optional={"select_only", "max_rows"}):
        return {}
    select_only = config.get("select_only", True)
    if not isinstance(select_only, bool):
        problems.add(f"{path}.select_only", f"must be a boolean, not {_type_name(select_only)}.")
    tables = config.get("tables", [])
    if not isinstance(tables, list):
        problems.add(f"{path}.tables", f"must be a list of table names, not {_type_name(tables)}.")
    elif not tables:
        problems.add(f"{path}.tables", "must name at least one table.")
    else:
        for i, table in enumerate(tables):
            if not isinstance(table, str) or not _IDENTIFIER.match(table):
                problems.add(
                    f"{path}.tables[{i}]",
                    f"{table!r} is not a table name (letters, digits, _ and $, "
                    "optionally schema.table).",
                )
    max_rows = config.get("max_rows")
    if max_rows is not None:
        _count(problems, f"{path}.max_rows", max_rows, minimum=1)
    return {"select_only": select_only, "tables": tables, "max_rows": max_rows}


_RULE_KEYS = {"allowed_values", "patterns", "max_length"}


def _validate_tool_rules(problems: PolicyProblems, path: str, rules: Any) -> None:
    if not _keys(problems, path, rules, required=set(), optional=_RULE_KEYS):
        return
    for rule in sorted(_RULE_KEYS & rules.keys()):
        by_arg = rules[rule]
        rule_path = f"{path}.{rule}"
        if not isinstance(by_arg, dict):
            problems.add(rule_path, f"must map argument names to values, not {_type_name(by_arg)}.")
            continue
        for arg, value in by_arg.items():
            arg_path = f"{rule_path}.{arg}"
            if not isinstance(arg, str) or not arg.strip():
                problems.add(arg_path, "Argument names must not be empty.")
            if rule == "allowed_values":
                if not isinstance(value, list) or not value:
                    problems.add(arg_path, "must be a non-empty list of allowed values.")
            elif rule == "patterns":
                if not isinstance(value, str):
                    problems.add(
                        arg_path, f"must be a regular expression, not {_type_name(value)}."
                    )
                    continue
                try:
                    re.compile(value)
                except re.error as exc:
                    problems.add(arg_path, f"is not a valid regular expression: {exc}.")
            else:
                _count(problems, arg_path, value, minimum=0)


def _validate_tool_guard(config: Any, problems: PolicyProblems) -> dict[str, Any]:
    path = "config"
    if not _keys(problems, path, config, required=set(), optional={"tools", "allowed_tools"}):
        return {}
    if "tools" not in config and "allowed_tools" not in config:
        problems.add(f"{path}.tools", "This key is required (or allowed_tools).")
    allowed = config.get("allowed_tools")
    names = isinstance(allowed, list) and all(isinstance(t, str) and t.strip() for t in allowed)
    if allowed is not None and not names:
        problems.add(f"{path}.allowed_tools", "must be a list of tool names.")
    tools = config.get("tools", {})
    if not isinstance(tools, dict):
        problems.add(f"{path}.tools", f"must map tool names to rules, not {_type_name(tools)}.")
    elif not tools and allowed is None:
        problems.add(f"{path}.tools", "must name at least one tool.")
    else:
        for tool, rules in tools.items():
            if not isinstance(tool, str) or not tool.strip():
                problems.add(f"{path}.tools", "Tool names must not be empty.")
            _validate_tool_rules(problems, f"{path}.tools.{tool}", rules)
    cleaned: dict[str, Any] = {"tools": tools}
    if allowed is not None:
        cleaned["allowed_tools"] = allowed
    return cleaned


def _path(loc: tuple[Any, ...]) -> str:
    """A pydantic error location as a config path: ``config.tools.search``, ``config.x[1]``."""
    out = "config"
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _validate_with(model: type[BaseModel]) -> Callable[[Any, PolicyProblems], dict[str, Any]]:
    """A validator from a guardrail's own config model (``runtime.guardrails``): the config
    the runtime accepts is exactly the one stored; its errors reported per path."""

    def validate(config: Any, problems: PolicyProblems) -> dict[str, Any]:
        if not isinstance(config, dict):
            problems.add("config", f"must be an object, not {_type_name(config)}.")
            return {}
        try:
            return model.model_validate(config).model_dump(mode="json")
        except PydanticValidationError as exc:
            for error in exc.errors():
                message = error["msg"].removeprefix("Value error, ")
                if error["type"] == "extra_forbidden":
                    allowed = ", ".join(sorted(model.model_fields))
                    message = f"Unknown key. Allowed keys: {allowed}"
                elif error["type"] == "missing":
                    message = "This key is required"
                problems.add(_path(tuple(error["loc"])), f"{message}.")
            return {}

    return validate


@dataclass(frozen=True)
class PolicyKind:
    """A kind of policy: its name, what it governs, and its config validator.

    ``validate(config, problems)`` returns the cleaned config; it reports problems through
    ``problems.add(path, message)`` and must not raise for bad input.
    """

    name: str
    description: str
    validate: Callable[[Any, PolicyProblems], dict[str, Any]]
    example: dict[str, Any]


POLICY_KINDS: dict[str, PolicyKind] = {}


def policy_kind_register(kind: PolicyKind) -> PolicyKind:
    """Add ``kind`` to the registry (a later registration of the same name replaces it)."""
    POLICY_KINDS[kind.name] = kind
    return kind


policy_kind_register(
    PolicyKind(
        name="query",
        description="What a query tool may run (runtime.safety.QueryPolicy).",
        validate=_validate_query,
        example={"select_only": True, "tables": ["orders"], "max_rows": 100},
    )
)
policy_kind_register(
    PolicyKind(
        name="tool_guard",
        description="Which argument values tools accept (runtime.safety.ToolArgumentGuard).",
        validate=_validate_tool_guard,
        example={"tools": {"search": {"patterns": {"query": "[\\w ]+"}}}},
    )
)
policy_kind_register(
    PolicyKind(
        name="input_screen",
        description="Messages an agent refuses before its model sees them (runtime.guardrails"
        ".InputScreen): blocked terms and patterns, and the reply instead.",
        validate=_validate_with(InputScreenConfig),
        example={"blocked_terms": ["password"], "blocked_patterns": [], "reply": "I can't."},
    )
)
policy_kind_register(
    PolicyKind(
        name="output_redaction",
        description="What is masked in a model's answers (runtime.guardrails.OutputRedaction): "
        "e-mail addresses, phone and card numbers, keys, your own patterns.",
        validate=_validate_with(OutputRedactionConfig),
        example={"redact": ["email", "phone", "card", "key"], "patterns": {}},
    )
)
policy_kind_register(
    PolicyKind(
        name="step_limits",
        description="How many model calls and tool runs one run may make before it is "
        "stopped (runtime.guardrails.StepLimits).",
        validate=_validate_with(StepLimitsConfig),
        example={"max_model_calls": 20, "max_tool_calls": 50},
    )
)
policy_kind_register(
    PolicyKind(
        name="rate_limit",
        description="How often one user may call a tool (runtime.guardrails.RateLimit).",
        validate=_validate_with(RateLimitConfig),
        example={"max_calls": 10, "window_seconds": 60},
    )
)
policy_kind_register(
    PolicyKind(
        name="llm_screen",
        description="What a screening model judges (runtime.safety.LlmScreen): the input, "
        "tool calls, the output.",
        validate=_validate_with(LlmScreenConfig),
        example={"screen": ["input", "tool_input", "output"]},
    )
)


def policy_validate(*, kind: str, config: Any) -> dict[str, Any]:
    """The cleaned config of a ``kind`` policy (defaults filled in).

    Raises ``django.core.exceptions.ValidationError`` whose ``message_dict`` is keyed by field:
    ``kind`` for an unknown kind, else ``config`` or a path inside it (``config.tables[0]``,
    ``config.tools.lookup.patterns.id``), listing every problem found, not just the first.
    A config nested deeper than ``MAX_JSON_DEPTH`` or holding what no database stores (a NUL,
    an unpaired surrogate) is refused under ``config`` before any validator walks it.
    """
    unstorable = value_problem(config)
    if unstorable:
        raise ValidationError({"config": [ValidationError(f"Cannot be stored: {unstorable}.")]})
    policy_kind = POLICY_KINDS.get(kind)
    if policy_kind is None:
        known = ", ".join(sorted(POLICY_KINDS))
        raise ValidationError(
            {"kind": [ValidationError(f"Unknown policy kind {kind!r}. Known kinds: {known}.")]}
        )
    problems = PolicyProblems()
    cleaned = policy_kind.validate(config, problems)
    problems.raise_if_any()
    return cleaned
