"""Limits: how many steps one run may take, how often a user may call a tool.

:class:`StepLimits` stops the run (any-agent's way: a callback that raises ends the run with
an error naming it). :class:`RateLimit` refuses one tool call and lets the model carry on.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import Any, ClassVar, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from runtime.callbacks.naming import Hook
from runtime.contexts.callback_context import CallbackContext
from runtime.guardrails.policy import Guardrail, PolicyView
from runtime.models.llm_request import LlmRequest
from runtime.telemetry.attributes import Decision
from runtime.tools.base_tool import BaseTool
from runtime.tools.tool_context import ToolContext

__all__ = [
    "InMemoryRateCounter",
    "RateCounter",
    "RateLimit",
    "RateLimitConfig",
    "StepLimitExceededError",
    "StepLimits",
    "StepLimitsConfig",
]


class StepLimitExceededError(RuntimeError):
    """A run reached the step limit of its policy."""


class StepLimitsConfig(BaseModel):
    """At most ``max_model_calls`` model calls and ``max_tool_calls`` tool calls per run (one
    invocation: its sub-agents and parallel branches counted together; an agent called as a
    tool runs its own invocation, counted apart); an absent limit is no limit. A step counts
    once it passed this check, even when a later callback answers for it."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    max_model_calls: int | None = Field(default=None, ge=1, le=100_000)
    max_tool_calls: int | None = Field(default=None, ge=1, le=100_000)


class StepLimits(Guardrail[StepLimitsConfig]):
    """``before_model`` and ``before_tool`` hooks counting the run's steps: the step after
    the last one allowed raises :class:`StepLimitExceededError` and the run stops with it.

    ``Agent(..., before_model_callback=limits.before_model,
    before_tool_callback=limits.before_tool)`` — put them first in their lists.
    """

    kind = "step_limits"
    summary = "How many model calls and tool runs one run may make before it is stopped."
    example: ClassVar[dict[str, Any]] = {"max_model_calls": 20, "max_tool_calls": 50}
    Config = StepLimitsConfig
    unreadable = Decision.LIMIT

    def __init__(self, policy: Any = None, **kwargs: Any) -> None:
        super().__init__(policy, **kwargs)
        self.before_model = Hook(self.name, self._before_model)
        self.before_tool = Hook(self.name, self._before_tool)

    async def _check(self, ctx: CallbackContext, field: str, what: str) -> None:
        read = await self.read(ctx)
        if read is None:  # recorded as a limit, with why
            raise StepLimitExceededError("the run was stopped: its step limits could not be read")
        config, view = read
        limit = getattr(config, field) if config is not None else None
        # The run's tally of steps that passed this check, shared by its agents and parallel
        # branches: read and taken with no await between, so parallel calls cannot all slip
        # through on the same count.
        tally: dict[str, int] = ctx._invocation_context.extras.setdefault(
            f"step-limits:{self.name}", {}
        )
        done = tally.get(field, 0)
        if limit is None:
            tally[field] = done + 1
            self.record(Decision.ALLOWED, f"{what} {done + 1}; no limit", view)
            return
        if done < limit:
            tally[field] = done + 1
            self.record(Decision.ALLOWED, f"{what} {done + 1} of at most {limit}", view)
            return
        reason = f"this run made {done} {what}; the step limit is {limit}"
        self.record(Decision.LIMIT, reason, view)
        raise StepLimitExceededError(f"step limit reached: {reason} ({_label(view)})")

    async def _before_model(
        self, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> None:
        await self._check(callback_context, "max_model_calls", "model calls")

    async def _before_tool(
        self, tool: BaseTool, args: dict[str, Any], tool_context: ToolContext
    ) -> None:
        await self._check(tool_context, "max_tool_calls", "tool calls")


def _label(view: PolicyView | None) -> str:
    return f"policy {view.label}" if view is not None and view.label else "its policy"


class RateCounter(Protocol):
    """Counts calls per key in a window shared by everything that should share the limit."""

    async def hit(self, key: str, *, limit: int, window_s: float) -> float | None:
        """Count one call under ``key``; ``None`` when it is within ``limit`` calls per
        ``window_s`` seconds, else how many seconds until one is allowed (not counted)."""
        ...


class InMemoryRateCounter:
    """A sliding window per key, in this process (tests, one worker)."""

    def __init__(self, clock: Any = time.monotonic) -> None:
        self._clock = clock
        self._calls: dict[str, deque[float]] = {}
        self._lock = asyncio.Lock()

    async def hit(self, key: str, *, limit: int, window_s: float) -> float | None:
        async with self._lock:
            now = self._clock()
            calls = self._calls.setdefault(key, deque())
            while calls and calls[0] <= now - window_s:
                calls.popleft()
            if len(calls) >= limit:
                return max(calls[0] + window_s - now, 0.0)
            calls.append(now)
            return None


class RateLimitConfig(BaseModel):
    """At most ``max_calls`` calls per ``window_seconds``, counted per user and tool
    (``per: "user"``: per user, all the listed tools together); ``tools`` limits only those
    (absent: every tool)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    max_calls: int = Field(ge=1, le=1_000_000)
    window_seconds: int = Field(ge=1, le=86_400)
    tools: list[str] | None = None
    per: Literal["user_tool", "user"] = "user_tool"


class RateLimit(Guardrail[RateLimitConfig]):
    """A ``before_tool`` guardrail: a user's call over the limit is not run; the model gets
    ``{"error": "Rate limit: …"}`` saying when to try again.

    ``counter`` decides who shares the count: :class:`InMemoryRateCounter` (this process) by
    default; a host with several workers passes one they share (AgentDash: the database).
    """

    kind = "rate_limit"
    summary = "How often one user may call a tool."
    example: ClassVar[dict[str, Any]] = {"max_calls": 10, "window_seconds": 60}
    Config = RateLimitConfig

    def __init__(self, policy: Any = None, *, counter: RateCounter | None = None, **kwargs: Any):
        super().__init__(policy, **kwargs)
        self.counter: RateCounter = counter or InMemoryRateCounter()
        self.before_tool = Hook(self.name, self._before_tool)

    async def _before_tool(
        self, tool: BaseTool, args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        found = await self.read(tool_context)
        if found is None:
            return {"error": "Tool call blocked: the rate limit policy could not be read."}
        config, view = found
        if config is None or (config.tools is not None and tool.name not in config.tools):
            self.record(Decision.ALLOWED, f"no rate limit on {tool.name}", view)
            return None
        scope = tool.name if config.per == "user_tool" else "*"
        key = f"{tool_context.agent_name}\x1f{tool_context.user_id}\x1f{scope}"
        wait = await self.counter.hit(
            key, limit=config.max_calls, window_s=float(config.window_seconds)
        )
        rule = f"at most {config.max_calls} call(s) per {config.window_seconds} s per user"
        if wait is None:
            self.record(Decision.ALLOWED, f"within {rule}", view)
            return None
        reason = f"{rule} ({'to ' + tool.name if scope != '*' else 'to its tools'})"
        self.record(Decision.LIMIT, f"over the rate limit: {reason}", view)
        return {"error": f"Rate limit: {reason}; try again in {max(1, round(wait))} s."}
