"""Runs callbacks: ADK's contract, any-agent's hooks, a span per call, the switchboard asked."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from runtime.callbacks.any_agent import Callback, overrides
from runtime.callbacks.naming import callback_name
from runtime.debug import breakpoints
from runtime.errors import CallbackError
from runtime.telemetry.attributes import AgentDash, Outcome, StepKind
from runtime.telemetry.payloads import returned_value, to_json
from runtime.telemetry.tracing import LiveSpan, start_span, trace_id_hex

if TYPE_CHECKING:
    from runtime.contexts.invocation_context import InvocationContext


@dataclass(frozen=True, slots=True)
class NamedCallback:
    """An ADK-style callback and the name it is switched by."""

    name: str
    fn: Callable[..., Any]


def normalize(value: Any, slot: str) -> tuple[NamedCallback, ...]:
    """One callable, a list of them, or ``None`` → named callbacks, in order.

    Raises ``TypeError`` naming the slot when an item is not callable.
    """
    if value is None:
        return ()
    items = value if isinstance(value, list | tuple) else [value]
    out = []
    for item in items:
        if not callable(item):
            raise TypeError(f"{slot} must be a callable or a list of callables, got {item!r}")
        out.append(NamedCallback(callback_name(item), item))
    return tuple(out)


def _fail(
    ictx: InvocationContext, span: LiveSpan, name: str, hook: str, exc: Exception
) -> CallbackError:
    span.set_attribute(AgentDash.CALLBACK_OUTCOME, Outcome.RAISED)
    span.set_attribute(AgentDash.ERROR_MESSAGE, f"{type(exc).__name__}: {exc}")
    breakpoints.callback_ended(ictx, name, Outcome.RAISED)
    trace_id = trace_id_hex(span)
    return CallbackError(
        f"callback {name!r} ({hook}) of agent {ictx.agent.name!r} raised "
        f"{type(exc).__name__}: {exc} [trace {trace_id}]",
        callback_name=name,
        hook=hook,
        agent_name=ictx.agent.name,
        trace_id=trace_id,
    )


def _span_attributes(ictx: InvocationContext, name: str, hook: str, style: str) -> dict[str, Any]:
    return {
        AgentDash.SPAN_KIND: StepKind.CALLBACK,
        AgentDash.CALLBACK_NAME: name,
        AgentDash.CALLBACK_HOOK: hook,
        AgentDash.CALLBACK_STYLE: style,
        AgentDash.INVOCATION_ID: ictx.invocation_id,
        "gen_ai.agent.name": ictx.agent.name,
        "gen_ai.conversation.id": ictx.session.id,
    }


async def run_adk_callbacks(
    ictx: InvocationContext,
    hook: str,
    callbacks: Sequence[NamedCallback],
    expected: type | tuple[type, ...],
    *,
    step_span: LiveSpan | None = None,
    mark: str = AgentDash.SKIPPED_BY,
    **kwargs: Any,
) -> Any:
    """Run ``callbacks`` in order with ``kwargs``; the first non-``None`` return wins.

    A switched-off callback is skipped (its span says ``disabled``). A return value that is not
    ``expected`` is an error, like an exception: the run stops with :class:`CallbackError`.
    When one overrides, its name is written on ``step_span`` under ``mark``, and (when the
    invocation captures content) its span records what it returned and, for a callback given
    a response, result or error (``llm_response``, ``tool_response``, ``error``), what that
    return replaced.
    """
    for cb in callbacks:
        with start_span(
            f"callback {cb.name}", _span_attributes(ictx, cb.name, hook, "adk")
        ) as span:
            if not ictx.switchboard.is_enabled(
                agent_name=ictx.agent.name, callback_name=cb.name, session_id=ictx.session.id
            ):
                span.set_attribute(AgentDash.CALLBACK_OUTCOME, Outcome.DISABLED)
                continue
            try:
                result = cb.fn(**kwargs)
                if inspect.isawaitable(result):
                    result = await result
                if result is not None and not isinstance(result, expected):
                    names = expected if isinstance(expected, tuple) else (expected,)
                    raise TypeError(
                        f"returned {type(result).__name__}; {hook} callbacks return "
                        f"{' or '.join(t.__name__ for t in names)} or None"
                    )
            except Exception as exc:
                raise _fail(ictx, span, cb.name, hook, exc) from exc
            if result is None:
                span.set_attribute(AgentDash.CALLBACK_OUTCOME, Outcome.PASSED)
                continue
            span.set_attribute(AgentDash.CALLBACK_OUTCOME, Outcome.OVERRIDDEN)
            breakpoints.callback_ended(ictx, cb.name, Outcome.OVERRIDDEN)
            if ictx.captures_content():
                _record_override(span, result, kwargs, conceals=_conceals(cb.fn))
            if step_span is not None:
                step_span.set_attribute(mark, cb.name)
            return result
    return None


_REPLACEABLE = ("llm_response", "tool_response", "error")
"""The keyword arguments that hold what an overriding callback's return replaces."""


def _conceals(fn: Callable[..., Any]) -> bool:
    return getattr(fn, "conceals", False) is True


def _record_override(
    span: LiveSpan, result: Any, kwargs: dict[str, Any], *, conceals: bool
) -> None:
    span.set_attribute(AgentDash.CALLBACK_RETURNED, to_json(returned_value(result)))
    if conceals:
        return
    for name in _REPLACEABLE:
        if name in kwargs:
            replaced = to_json(returned_value(kwargs[name]))
            span.set_attribute(AgentDash.CALLBACK_REPLACED, replaced)
            return


def holds_stream(ictx: InvocationContext, callbacks: Sequence[NamedCallback]) -> bool:
    """Whether a switched-on callback among ``callbacks`` (an agent's ``after_model``) asks
    for the model's partial responses to be held back (``Hook(holds_stream=True)``)."""
    return any(
        getattr(cb.fn, "holds_stream", False) is True
        and ictx.switchboard.is_enabled(
            agent_name=ictx.agent.name, callback_name=cb.name, session_id=ictx.session.id
        )
        for cb in callbacks
    )


async def run_any_agent_hook(
    ictx: InvocationContext,
    hook: str,
    callbacks: Sequence[Callback],
    step_span: LiveSpan,
    **kwargs: Any,
) -> None:
    """Call ``hook`` on every any-agent callback that implements it, in list order.

    Each call gets its own view of the invocation's :class:`Context`: ``current_span`` is
    ``step_span`` and ``shared`` is the invocation's one dict, so concurrent branches (parallel
    agents, parallel tool calls) never see each other's span across an ``await``. The
    ``shared`` of a returned ``Context`` (or a rebound one) becomes the invocation's for the
    rest of the run, in every agent.
    """
    context = ictx.any_agent_context
    for cb in callbacks:
        if not overrides(cb, hook):
            continue
        name = callback_name(cb)
        with start_span(
            f"callback {name}", _span_attributes(ictx, name, hook, "any-agent")
        ) as span:
            if not ictx.switchboard.is_enabled(
                agent_name=ictx.agent.name, callback_name=name, session_id=ictx.session.id
            ):
                span.set_attribute(AgentDash.CALLBACK_OUTCOME, Outcome.DISABLED)
                continue
            view = replace(context, current_span=step_span, agent_name=ictx.agent.name)
            try:
                result = getattr(cb, hook)(view, **kwargs)
                if inspect.isawaitable(result):
                    result = await result
            except Exception as exc:
                raise _fail(ictx, span, name, hook, exc) from exc
            if result is not None and not isinstance(result, type(context)):
                wrong = TypeError(f"returned {type(result).__name__}; hooks return the Context")
                raise _fail(ictx, span, name, hook, wrong) from wrong
            span.set_attribute(AgentDash.CALLBACK_OUTCOME, Outcome.PASSED)
            # Mutated in place: the Context object is shared by every agent of the invocation.
            context.shared = (view if result is None else result).shared
