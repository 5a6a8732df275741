"""A trace id chosen before a run starts, for the root span it is about to start.

Whoever records a run before its spans exist (a worker claiming it) can then write the run's
trace in the same statement, instead of waiting for the first span and writing it again.
OpenTelemetry makes a root span's trace id with its tracer provider's id generator;
:class:`ChosenTraceIds` wraps that generator and hands out, once, the id chosen for the
current context with :func:`trace_id_chosen`. Everything else — span ids, root spans of
other contexts or after the first — comes from the wrapped generator as before.

Without an SDK provider, or with a tracer whose generator is not wrapped, the chosen id is
never used: :func:`chosen_trace_ids` says whether it will be, and whoever wrote it down
before the span checks the span's trace all the same.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from contextvars import ContextVar

from opentelemetry import trace
from opentelemetry.sdk.trace import Tracer as SdkTracer
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator

from runtime.telemetry.tracing import tracer

_chosen: ContextVar[list[int] | None] = ContextVar("agentdash_chosen_trace_id", default=None)


class ChosenTraceIds(IdGenerator):
    """The wrapped generator's ids, but the next trace id of a context for which one was
    chosen (:func:`trace_id_chosen`) is that one, once."""

    def __init__(self, wrapped: IdGenerator | None = None) -> None:
        self.wrapped = wrapped or RandomIdGenerator()

    def generate_span_id(self) -> int:
        return self.wrapped.generate_span_id()

    def generate_trace_id(self) -> int:
        held = _chosen.get()
        if held:
            return held.pop()
        return self.wrapped.generate_trace_id()


def trace_id_new() -> str:
    """A new, valid trace id as 32 hex digits (never all zeros)."""
    return format(secrets.randbits(128) or 1, "032x")


class ChosenTrace:
    """A trace id chosen for the next root span; ``taken`` once a span has it."""

    def __init__(self, trace_id: str) -> None:
        self.trace_id = trace_id
        self._held = [int(trace_id, 16)]

    @property
    def taken(self) -> bool:
        return not self._held


@contextlib.contextmanager
def trace_id_chosen(trace_id: str) -> Iterator[ChosenTrace]:
    """In this block (and the tasks it starts), the next root span gets ``trace_id`` (32
    hex digits) — when the provider's generator is wrapped (:func:`chosen_trace_ids`)."""
    chosen = ChosenTrace(trace_id)
    token = _chosen.set(chosen._held)
    try:
        yield chosen
    finally:
        _chosen.reset(token)


def chosen_trace_ids_install(provider: TracerProvider) -> None:
    """Wrap the id generator of ``provider`` and of the runtime's tracer, should it have
    got its own from the provider already (idempotent)."""
    if not isinstance(provider.id_generator, ChosenTraceIds):
        # The SDK types the attribute as its default class; it takes any IdGenerator.
        provider.id_generator = ChosenTraceIds(provider.id_generator)  # type: ignore[assignment]
    real = _runtime_tracer()
    if real is not None and not isinstance(real.id_generator, ChosenTraceIds):
        real.id_generator = ChosenTraceIds(real.id_generator)


def chosen_trace_ids() -> bool:
    """Whether the runtime's spans take chosen trace ids: its tracer's generator is wrapped
    or, not made yet, will be the global provider's, which is."""
    real = _runtime_tracer()
    generator = getattr(real or trace.get_tracer_provider(), "id_generator", None)
    return isinstance(generator, ChosenTraceIds)


def _runtime_tracer() -> SdkTracer | None:
    # The API's proxy makes its tracer at its first span, from the global provider then: a
    # tracer made before the generator was wrapped keeps the one it got.
    real = getattr(tracer, "_real_tracer", None)
    return real if isinstance(real, SdkTracer) else None
