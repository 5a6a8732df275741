"""Breakpoints: a run pauses before a named tool, before every model call, or after a
callback's outcome (``raised``, ``overridden``), the same way a tool confirmation pauses it —
an ``adk_request_confirmation`` call the runtime stores, answered by a person — so a paused
run holds no worker and goes on in any process once answered.

The answer's payload says how to go on: ``{"step": true}`` pauses again before the next step
(tool or model call), ``{"cancel": true}`` (with ``confirmed`` false) ends the invocation
there; a tool breakpoint's payload ``args`` replaces the call's arguments. A denied tool
breakpoint tells the model the call was refused; a denied model breakpoint ends the
invocation.

Which breakpoints hold is read at every step from the ``Runner``'s ``breakpoints`` source
(a callable given the invocation context, returning :class:`Breakpoints`, possibly awaitable),
so an operator's change applies at the next step of a running agent.
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from runtime.tools.tool_confirmation import ToolConfirmation

if TYPE_CHECKING:
    from runtime.contexts.invocation_context import InvocationContext

MODEL_STEP = "agentdash_model_call"
"""The name of the stand-in call a model breakpoint's request asks about."""

OUTCOMES = frozenset({"raised", "overridden"})
BREAKPOINT_KEY = "breakpoint"
"""The key of a breakpoint request's payload saying which breakpoint paused."""

_PASS = "breakpoints.pass"  # ictx.extras: steps let through once (answered breakpoints)
_NEXT = "breakpoints.next"  # ictx.extras: why the next step pauses (step, callback outcome)


@dataclass(frozen=True)
class Breakpoints:
    """Where runs pause: before these tools, before every model call, after a callback
    ends with one of these outcomes."""

    before_tools: frozenset[str] = frozenset()
    before_model: bool = False
    outcomes: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        unknown = set(self.outcomes) - OUTCOMES
        if unknown:
            raise ValueError(f"unknown callback outcomes {sorted(unknown)}: use {sorted(OUTCOMES)}")

    @property
    def empty(self) -> bool:
        return not (self.before_tools or self.before_model or self.outcomes)


NONE = Breakpoints()
BreakpointSource = Callable[
    ["InvocationContext"], "Breakpoints | Awaitable[Breakpoints | None] | None"
]


async def current(ctx: InvocationContext) -> Breakpoints:
    """The breakpoints that hold now (none when the runner has no source)."""
    source = ctx.breakpoints
    if source is None:
        return NONE
    found = source(ctx)
    if inspect.isawaitable(found):
        found = await found
    return found or NONE


def callback_ended(ctx: InvocationContext, name: str, outcome: str) -> None:
    """A callback ended with ``outcome``: remembered, and checked at the next step."""
    if outcome in OUTCOMES:
        ctx.extras.setdefault("breakpoints.outcomes", []).append((name, outcome))


async def pause_reason(ctx: InvocationContext, *, tool: str | None) -> str | None:
    """Why the step about to start (``tool``: a call of that tool; ``None``: a model call)
    pauses, or ``None`` to go on. A step let through by an answer goes on once."""
    key = f"tool:{tool}" if tool is not None else "model"
    passed = ctx.extras.setdefault(_PASS, set())
    if key in passed:
        passed.discard(key)
        return None
    found = await current(ctx)
    outcomes = ctx.extras.pop("breakpoints.outcomes", [])
    hits = [f"{name} {outcome}" for name, outcome in outcomes if outcome in found.outcomes]
    step = ctx.extras.pop(_NEXT, None)
    where = f"tool {tool}" if tool is not None else f"a model call of {ctx.agent.name}"
    if step:
        return f"Step: paused before {where}"
    if hits:
        return f"Breakpoint after callback {', '.join(hits)}: paused before {where}"
    if tool is not None and tool in found.before_tools:
        return f"Breakpoint: before tool {tool}"
    if tool is None and found.before_model:
        return f"Breakpoint: before {where}"
    return None


def is_breakpoint(confirmation: ToolConfirmation | None) -> bool:
    payload = confirmation.payload if confirmation is not None else None
    return isinstance(payload, dict) and BREAKPOINT_KEY in payload


def answered(ctx: InvocationContext, confirmation: ToolConfirmation, *, tool: str | None) -> str:
    """Take a person's answer to a breakpoint: ``"go"`` (the step runs, unpaused once),
    ``"deny"`` or ``"cancel"``. A ``step`` answer pauses before the step after."""
    payload = confirmation.payload if isinstance(confirmation.payload, dict) else {}
    if payload.get("cancel"):
        return "cancel"
    if not confirmation.confirmed:
        return "deny"
    if payload.get("step"):
        ctx.extras[_NEXT] = "step"
    key = f"tool:{tool}" if tool is not None else "model"
    ctx.extras.setdefault(_PASS, set()).add(key)
    return "go"


def model_request_call() -> dict[str, Any]:
    """The ``originalFunctionCall`` of a model breakpoint's request."""
    return {"id": f"adk-{uuid.uuid4().hex[:16]}", "name": MODEL_STEP, "args": {}}


def breakpoint_payload(kind: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    payload: dict[str, Any] = {BREAKPOINT_KEY: kind}
    if args is not None:
        payload["args"] = args
    return payload
