"""A reusable ``before_tool_callback``: rules on which tools run and with which arguments.

ADK's safety guide validates tool arguments in a before-tool callback, e.g. "the user id the
model passed must be the session's user". :class:`ToolArgumentGuard` is that callback, built
from declared rules instead of hand-written checks::

    guard = ToolArgumentGuard(
        {"get_orders": {"user_id_param": ArgumentRule(state_key="session_user_id")}},
        name="orders-guard",
    )
    Agent(..., tools=[get_orders], before_tool_callback=guard)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from runtime.callbacks.naming import named
from runtime.tools.base_tool import BaseTool
from runtime.tools.tool_context import ToolContext

__all__ = ["ANY", "VIOLATION_STATE_KEY", "ArgumentRule", "ToolArgumentGuard"]

VIOLATION_STATE_KEY = "temp:guardrail_violation"
ANY = "*"
"""As a tool name: rules for every tool; as an argument name: rules for every argument."""


class ArgumentRule(BaseModel):
    """Constraints on one argument; every constraint set must hold.

    - ``allowed_values``: the value must equal one of these.
    - ``pattern``: the value must be a string that fully matches this regular expression.
    - ``max_length``: a string value may have at most this many characters.
    - ``state_key``: the value must equal ``state[state_key]``. A missing argument, or a
      missing state value, is a violation (fail closed).
    - ``required``: the argument must be present.

    Apart from ``state_key`` and ``required``, an absent argument is not checked.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    allowed_values: list[Any] | None = None
    pattern: str | None = None
    max_length: int | None = Field(default=None, ge=0)
    state_key: str | None = None
    required: bool = False

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str | None) -> str | None:
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from exc
        return pattern

    def violation(self, arg: str, args: Mapping[str, Any], state: Any) -> tuple[str, str] | None:
        """``(rule, reason)`` for the first constraint ``args[arg]`` breaks, or ``None``."""
        present = arg in args
        value = args.get(arg)
        if self.state_key is not None:
            expected = state.get(self.state_key)
            if expected is None or not present or value != expected:
                return "state_key", f"argument {arg!r} does not match the session's value"
        if not present:
            return ("required", f"argument {arg!r} is required") if self.required else None
        if self.allowed_values is not None and value not in self.allowed_values:
            allowed = ", ".join(repr(v) for v in self.allowed_values)
            return "allowed_values", f"argument {arg!r} must be one of: {allowed}"
        if self.pattern is not None and not (
            isinstance(value, str) and re.fullmatch(self.pattern, value)
        ):
            return "pattern", f"argument {arg!r} does not have the required format"
        size = len(value) if isinstance(value, str) else 0
        if self.max_length is not None and size > self.max_length:
            return (
                "max_length",
                f"argument {arg!r} has {size} characters; at most {self.max_length}",
            )
        return None


class ToolArgumentGuard:
    """A ``before_tool_callback`` enforcing ``rules``: tool name → argument name → rule.

    ``"*"`` (:data:`ANY`) as a tool name applies its rules to every tool, as an argument name
    to every argument the call passes. ``allowed_tools``, when given, is the set of tools
    that may run at all (``None``: any tool).

    Called as ``guard(tool=, args=, tool_context=)``. A violation skips the tool: it returns
    ``{"error": "Tool call blocked: <reason>"}``, which the model gets as the tool's result,
    and records ``{"guard", "tool", "argument", "rule", "reason"}`` in
    ``tool_context.state["temp:guardrail_violation"]`` (this invocation only). Otherwise it
    returns ``None`` and the call proceeds. ``name`` is the callback's switchboard name:
    give differently configured guards different names to switch them separately.
    """

    def __init__(
        self,
        rules: Mapping[str, Mapping[str, ArgumentRule]] | None = None,
        *,
        allowed_tools: Iterable[str] | None = None,
        name: str = "tool-argument-guard",
    ) -> None:
        self.rules = {tool: dict(by_arg) for tool, by_arg in (rules or {}).items()}
        self.allowed_tools = frozenset(allowed_tools) if allowed_tools is not None else None
        self.name = name
        named(name)(self)  # the name callback_name() and the switchboard go by

    def __repr__(self) -> str:
        return f"ToolArgumentGuard(name={self.name!r})"

    def check(
        self, tool_name: str, args: Mapping[str, Any], state: Any
    ) -> tuple[str | None, str, str] | None:
        """``(argument, rule, reason)`` for the first rule the call breaks, else ``None``.

        ``state`` is anything with ``get`` (the session state).
        """
        if self.allowed_tools is not None and tool_name not in self.allowed_tools:
            return None, "allowed_tools", f"tool {tool_name!r} is not allowed"
        for by_arg in (self.rules.get(ANY, {}), self.rules.get(tool_name, {})):
            for arg, rule in by_arg.items():
                for each in sorted(args) if arg == ANY else [arg]:
                    found = rule.violation(each, args, state)
                    if found is not None:
                        return each, *found
        return None

    def __call__(
        self, tool: BaseTool, args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        found = self.check(tool.name, args, tool_context.state)
        if found is None:
            return None
        argument, rule, reason = found
        tool_context.state[VIOLATION_STATE_KEY] = {
            "guard": self.name,
            "tool": tool.name,
            "argument": argument,
            "rule": rule,
            "reason": reason,
        }
        return {"error": f"Tool call blocked: {reason}."}
