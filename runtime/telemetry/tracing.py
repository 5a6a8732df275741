"""The runtime's tracer and a span wrapper whose attributes can always be read back."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from runtime.telemetry.attributes import AgentDash

tracer = trace.get_tracer("agentdash.runtime")


class LiveSpan:
    """A step's span as callbacks see it (any-agent's ``Context.current_span``).

    It mirrors every attribute set through it, so ``attributes`` can be read and rewritten
    whether or not an OpenTelemetry SDK is installed (without one, spans record nothing).
    Everything else is delegated to the underlying span.
    """

    __slots__ = ("attributes", "span")

    def __init__(self, span: Span, attributes: Mapping[str, AttributeValue] | None = None) -> None:
        self.span = span
        self.attributes: dict[str, AttributeValue] = dict(attributes or {})

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        self.attributes[key] = value
        self.span.set_attribute(key, value)

    def set_attributes(self, attributes: dict[str, AttributeValue]) -> None:
        for key, value in attributes.items():
            self.set_attribute(key, value)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.span, name)


@contextmanager
def start_span(
    name: str, attributes: Mapping[str, AttributeValue], kind: SpanKind = SpanKind.INTERNAL
) -> Iterator[LiveSpan]:
    """Start ``name`` as the current span; an exception escaping it marks it errored.

    What ``start_as_current_span`` does, without its two nested generator context managers
    (2 of a span's 13 µs with an SDK and no processor, on every step)."""
    live = open_span(name, attributes, kind)
    token = otel_context.attach(trace.set_span_in_context(live.span))
    try:
        yield live
    except BaseException as exc:
        _failed(live, exc)
        raise
    finally:
        otel_context.detach(token)
        live.span.end()


T = TypeVar("T")


def open_span(
    name: str, attributes: Mapping[str, AttributeValue], kind: SpanKind = SpanKind.INTERNAL
) -> LiveSpan:
    """Start ``name`` as a child of the current span without making it current; pair it with
    :func:`iterate_in_span`, which ends it."""
    return LiveSpan(tracer.start_span(name, kind=kind, attributes=attributes), attributes)


async def iterate_in_span(
    span: LiveSpan, items: AsyncGenerator[T, None]
) -> AsyncGenerator[T, None]:
    """Yield ``items`` with ``span`` current while they are produced, but not while the
    consumer holds one: the span never leaks into the caller's context across a ``yield``,
    even when the caller stops early. Ends ``span`` (marked errored if ``items`` raised) and
    closes ``items`` when done."""
    ctx = trace.set_span_in_context(span.span)
    try:
        while True:
            token = otel_context.attach(ctx)
            try:
                item = await items.__anext__()
            except StopAsyncIteration:
                return
            finally:
                otel_context.detach(token)
            yield item
    except BaseException as exc:
        _failed(span, exc)
        raise
    finally:
        token = otel_context.attach(ctx)
        try:
            await items.aclose()
        finally:
            otel_context.detach(token)
            span.span.end()


def _failed(span: LiveSpan, exc: BaseException) -> None:
    """``exc`` left ``span``'s block: marked errored, unless its generator is only being
    closed (``GeneratorExit``: the caller stopped early, nothing failed)."""
    if not isinstance(exc, GeneratorExit):
        mark_error(span, exc)


def mark_error(span: LiveSpan | Span, exc: BaseException) -> None:
    """Set ``span``'s status to error; the exception itself is recorded (as a span event with
    its traceback) only on the innermost span it passed through. A cancellation
    (``asyncio.CancelledError``) also sets ``agentdash.cancelled``: viewers show it as
    stopped, not failed."""
    target = span.span if isinstance(span, LiveSpan) else span
    if isinstance(exc, asyncio.CancelledError):
        target.set_attribute(AgentDash.CANCELLED, True)
    if not getattr(exc, "_agentdash_recorded", False):
        target.record_exception(exc)
        with contextlib.suppress(AttributeError):
            exc._agentdash_recorded = True  # type: ignore[attr-defined]
    target.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))


def trace_id_hex(span: LiveSpan | Span | None = None) -> str:
    """The current (or given) span's trace id as 32 hex digits; zeros without an SDK."""
    target = span.span if isinstance(span, LiveSpan) else (span or trace.get_current_span())
    return format(target.get_span_context().trace_id, "032x")
