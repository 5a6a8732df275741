"""The tool guard as a policy: which tools may run, and with which arguments."""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from runtime.callbacks.naming import Hook
from runtime.guardrails.policy import Guardrail
from runtime.safety.tool_guard import ArgumentRule, ToolArgumentGuard
from runtime.telemetry.attributes import Decision
from runtime.tools.base_tool import BaseTool
from runtime.tools.tool_context import ToolContext

__all__ = ["ToolPolicy", "ToolPolicyConfig"]

_RULE_FIELDS = {
    "allowed_values": "allowed_values",
    "patterns": "pattern",
    "max_length": "max_length",
}


def _name(name: str) -> str:
    if not name.strip():
        raise ValueError("names must not be empty")
    return name


def _compiles(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"not a valid regular expression: {exc}") from exc
    return pattern


Name = Annotated[str, AfterValidator(_name)]


class _ToolRules(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    allowed_values: dict[Name, Annotated[list[Any], Field(min_length=1)]] = Field(
        default_factory=dict
    )
    patterns: dict[Name, Annotated[str, AfterValidator(_compiles)]] = Field(default_factory=dict)
    max_length: dict[Name, Annotated[int, Field(ge=0)]] = Field(default_factory=dict)


class ToolPolicyConfig(BaseModel):
    """``allowed_tools``: the only tools that may run (absent: any); ``tools``: per tool
    (``"*"`` for all), per rule, per argument (``"*"`` for all): ``allowed_values`` (a list),
    ``patterns`` (a regular expression the whole value must match), ``max_length``."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    allowed_tools: list[Name] | None = None
    tools: dict[Name, _ToolRules] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _rules_compile(self) -> ToolPolicyConfig:
        if not self.tools and self.allowed_tools is None:  # a policy that checks nothing
            raise ValueError("name the tools' rules (tools) or the tools allowed (allowed_tools)")
        self.guard()  # ArgumentRule checks each pattern and length
        return self

    def guard(self, name: str = "tool-guard") -> ToolArgumentGuard:
        rules: dict[str, dict[str, ArgumentRule]] = {}
        for tool, by_rule in self.tools.items():
            per_arg: dict[str, dict[str, Any]] = {}
            for rule, field in _RULE_FIELDS.items():
                for arg, value in getattr(by_rule, rule).items():
                    per_arg.setdefault(arg, {})[field] = value
            rules[tool] = {arg: ArgumentRule(**fields) for arg, fields in per_arg.items()}
        return ToolArgumentGuard(rules, allowed_tools=self.allowed_tools, name=name)


class ToolPolicy(Guardrail[ToolPolicyConfig]):
    """A ``before_tool`` guardrail: a call its policy does not allow is not run; the model
    gets ``{"error": "Tool call blocked: <reason>."}`` as the tool's result.

    ``Agent(..., before_tool_callback=ToolPolicy(policy).before_tool)``
    """

    kind = "tool_guard"
    summary = "Which tools may run, and which argument values they accept."
    example: ClassVar[dict[str, Any]] = {"tools": {"search": {"patterns": {"query": "[\\w ]+"}}}}
    Config = ToolPolicyConfig

    def __init__(self, policy: Any = None, **kwargs: Any) -> None:
        super().__init__(policy, **kwargs)
        self.before_tool = Hook(self.name, self._before_tool)

    async def _before_tool(
        self, tool: BaseTool, args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        read = await self.read(tool_context)
        if read is None:
            return {"error": "Tool call blocked: the tool policy could not be read."}
        config, view = read
        if config is None:
            self.record(Decision.ALLOWED, "no tool policy governs this agent", None)
            return None
        found = config.guard(self.name).check(tool.name, args, tool_context.state)
        if found is None:
            self.record(Decision.ALLOWED, f"{tool.name} and its arguments are allowed", view)
            return None
        _argument, _rule, reason = found
        self.record(Decision.BLOCKED, reason, view)
        return {"error": f"Tool call blocked: {reason}."}
