"""A trace id chosen before the root span that takes it (``runtime.telemetry.trace_ids``)."""

from __future__ import annotations

import asyncio

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

from runtime.telemetry.trace_ids import (
    ChosenTraceIds,
    chosen_trace_ids_install,
    trace_id_chosen,
    trace_id_new,
)


def _tracer() -> trace.Tracer:
    return TracerProvider(id_generator=ChosenTraceIds()).get_tracer("test")


def _trace_of(span: trace.Span) -> str:
    return format(span.get_span_context().trace_id, "032x")


def test_the_first_root_span_in_the_block_takes_the_chosen_trace_and_only_it() -> None:
    tracer = _tracer()
    chosen = trace_id_new()
    with trace_id_chosen(chosen) as handle:
        assert not handle.taken
        with (
            tracer.start_as_current_span("invocation") as root,
            tracer.start_as_current_span("step") as child,
        ):
            assert handle.taken
        with tracer.start_as_current_span("another root") as other:
            pass
    with tracer.start_as_current_span("outside") as outside:
        pass

    assert _trace_of(root) == _trace_of(child) == chosen
    assert child.parent is not None and child.parent.span_id == root.get_span_context().span_id
    assert _trace_of(other) != chosen and _trace_of(outside) != chosen


async def test_a_task_started_in_the_block_shares_the_one_chosen_id() -> None:
    tracer = _tracer()
    chosen = trace_id_new()

    async def root() -> str:
        with tracer.start_as_current_span("invocation") as span:
            return _trace_of(span)

    with trace_id_chosen(chosen):
        first, second = await asyncio.gather(root(), root())  # two contexts, copied

    assert sorted([first == chosen, second == chosen]) == [False, True]


def test_new_ids_are_valid_and_distinct() -> None:
    ids = {trace_id_new() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(len(i) == 32 and int(i, 16) != 0 for i in ids)


def test_installing_wraps_a_providers_generator_once_and_keeps_it_in_use() -> None:
    inner = RandomIdGenerator()
    provider = TracerProvider(id_generator=inner)
    chosen_trace_ids_install(provider)
    chosen_trace_ids_install(provider)
    wrapped = provider.id_generator
    assert isinstance(wrapped, ChosenTraceIds) and wrapped.wrapped is inner

    tracer = provider.get_tracer("test")
    chosen = trace_id_new()
    with trace_id_chosen(chosen), tracer.start_as_current_span("root") as span:
        pass
    assert _trace_of(span) == chosen
