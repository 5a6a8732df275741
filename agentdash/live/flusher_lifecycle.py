"""How the live pipeline is set up: ``install`` feeds it the process's spans; its flusher
runs on the running loop or on a loop of its own in a daemon thread (``launch`` chooses);
``stop`` flushes what waits first; producers on any thread or loop wake the flusher and
wait for its flushes; and how long the flusher lingers for more before it flushes. A part
of :class:`agentdash.live.pipeline.LivePipeline`, which holds the state."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Self

from channels.layers import InMemoryChannelLayer, get_channel_layer
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

from agentdash.core.loop_thread import LoopThread, call_on_loop
from agentdash.core.threads import thread_pool_close
from agentdash.live.partials import PartialQueue, partials_send
from agentdash.live.previews import SpanPreviews
from agentdash.spans.otlp_out import agentdash_resource, otlp_out_install
from agentdash.spans.span_processor import LiveSpanProcessor
from runtime.telemetry.trace_ids import ChosenTraceIds, chosen_trace_ids_install

START_TIMEOUT_S = 30.0


class FlusherLifecycle:
    """Starting and stopping the flusher; :class:`LivePipeline` sets these attributes."""

    channel_layer_alias: str
    processor: LiveSpanProcessor
    _loop: asyncio.AbstractEventLoop | None
    _task: asyncio.Task[None] | None
    linger: float
    _wake: asyncio.Event | None
    _stir: asyncio.Event | None  # a lingering flusher looks again (a hurry, partials)
    _urgent: bool  # someone waits on the flusher: no lingering before the next flush
    _flushed: asyncio.Event | None
    _dirty: dict[str, int | None]
    _dirty_due: float  # when the changes marked since the last flush are due (monotonic)
    _dirty_lock: threading.Lock
    _settling: dict[str, int]
    _partials: PartialQueue
    _thread: ThreadPoolExecutor | None
    previews: SpanPreviews
    _loop_thread: LoopThread | None
    _start_lock: threading.Lock
    _stopping: bool
    _run: Callable[[], Coroutine[Any, Any, None]]  # the flusher's loop

    def install(self) -> Self:
        """Make the global OpenTelemetry SDK tracer provider feed this pipeline: add the
        processor to the one already set (its other processors stay), or set a new one (its
        resource: ``agentdash_resource()``). Also copies the spans to a collector when the
        standard ``OTEL_EXPORTER_OTLP_*`` variables name one (``spans.otlp_out``), and
        wraps its id generator, so that a run's trace can be chosen when it is claimed
        (``runtime.telemetry.trace_ids``). Idempotent; turns snapshot taking on."""
        provider = trace.get_tracer_provider()
        if not isinstance(provider, TracerProvider):
            trace.set_tracer_provider(
                TracerProvider(resource=agentdash_resource(), id_generator=ChosenTraceIds())
            )
            provider = trace.get_tracer_provider()
        if not isinstance(provider, TracerProvider):  # someone else's non-SDK provider won
            raise RuntimeError(f"the global tracer provider is not an SDK one: {provider!r}")
        chosen_trace_ids_install(provider)  # a run's trace is written when it is claimed
        processors = provider._active_span_processor._span_processors  # no public accessor
        if self.processor not in processors:
            provider.add_span_processor(self.processor)
        otlp_out_install(provider)
        self.processor.enabled = True
        return self

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def launch(self) -> None:
        """Start the flusher where it serves best (idempotent): on the running loop when the
        channel layer lives in this process (its clients' consumers are on this loop), else
        on a loop of its own, in a daemon thread: agents running flat out on this loop would
        otherwise hold up every await of its network publishing behind their steps."""
        layer = get_channel_layer(self.channel_layer_alias)
        if layer is None or isinstance(layer, InMemoryChannelLayer):
            self.start()
        else:
            self.start_thread()

    def start_thread(self) -> None:
        """Start the flusher on a loop of its own in a daemon thread, unless it already runs
        on a live loop; returns once it runs."""
        with self._start_lock:
            if self.running and self._loop is not None and not self._loop.is_closed():
                return
            own = LoopThread("agentdash-live-loop")

            async def begin() -> None:
                self.start()

            own.run(begin(), START_TIMEOUT_S)
            self._loop_thread = own

    def start(self) -> None:
        """Start the flusher on the running event loop, unless it already runs on a live loop.
        Raises ``RuntimeError`` without a running loop."""
        loop = asyncio.get_running_loop()
        if self.running and self._loop is not None and not self._loop.is_closed():
            return
        self._loop, self._stopping = loop, False
        self._wake, self._flushed = asyncio.Event(), asyncio.Event()
        self._stir, self._urgent = asyncio.Event(), False
        self._task = loop.create_task(self._flusher(), name="agentdash-live-flusher")

    async def _flusher(self) -> None:
        try:
            await self._run()
        finally:  # however it ends (cancelled too), whoever waits for a flush looks again
            self._signal_flushed()

    async def stop(self) -> None:
        """Flush what waits and publish it, then stop the flusher (from any loop)."""
        task, loop, wake = self._task, self._loop, self._wake
        if task is not None and not task.done() and loop is not None and not loop.is_closed():
            assert wake is not None
            self._stopping = True

            async def finish() -> None:
                self._hurry_now()  # a lingering flusher too
                await asyncio.shield(task)  # a stop given up leaves it to finish its flushes

            if loop is asyncio.get_running_loop():
                await finish()
            else:
                await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(finish(), loop))
        self._task = self._loop = None
        thread, self._thread = self._thread, None
        if thread is not None:
            await thread_pool_close(thread)
        await self.previews.close()
        own, self._loop_thread = self._loop_thread, None
        if own is not None:
            await asyncio.to_thread(own.stop, START_TIMEOUT_S)

    # ── Waking the flusher, waiting for it (from any thread or loop) ───────────────────────
    async def _on_flusher_loop(self, waiting: Coroutine[Any, Any, None]) -> None:
        """Await ``waiting`` on the flusher's loop (from it, or from another loop)."""
        assert self._loop is not None
        if self._loop is asyncio.get_running_loop():
            await waiting
        else:
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(waiting, self._loop))

    async def _wait_while(self, behind: Callable[[], bool], within: float | None = None) -> None:
        """Have the flusher flush at once, again and again, while ``behind()`` holds; at
        most ``within`` seconds (then ``TimeoutError``)."""
        async with asyncio.timeout(within):
            while behind() and self.running:
                assert self._flushed is not None
                flushed = self._flushed
                self._hurry_now()
                await flushed.wait()

    def _signal_flushed(self) -> None:
        assert self._flushed is not None
        self._flushed.set()
        self._flushed = asyncio.Event()

    def hurry_threadsafe(self) -> None:
        """Have the flusher flush what waits now, without lingering for more (from any
        thread): someone waits for it (a run's outcome was just recorded)."""
        self._on_loop_threadsafe(self._hurry_now)

    def _hurry_now(self) -> None:
        if self._wake is None or self._stir is None:
            return
        self._urgent = True
        self._wake.set()
        self._stir.set()

    def _stir_threadsafe(self) -> None:
        """Wake the flusher, and stir it if it lingers (partials to send)."""
        self._on_loop_threadsafe(self._stir_now)

    def _stir_now(self) -> None:
        if self._wake is not None and self._stir is not None:
            self._wake.set()
            self._stir.set()

    def _on_loop_threadsafe(self, call: Callable[[], None]) -> None:
        """``call()`` on the flusher's loop: now when on it, else soon (nothing without one)."""
        call_on_loop(self._loop, call)

    # ── Lingering ──────────────────────────────────────────────────────────────────────────
    async def _linger(self) -> None:
        """Let more gather before the next flush, for ``linger`` after the first of what
        waits came: the spans of a step (what gathered during a flush waited for it; their
        previews go out meanwhile) and the changes committed meanwhile (its events, a run's
        status). Partials queued meanwhile go out at once (no database). Not at all when
        a batch is full (the span processor stirs the flusher when it fills), a change is
        prompt (``notify_threadsafe``) or someone waits on the flusher (a run's outcome just
        recorded or to be recorded, a producer held back)."""
        assert self._stir is not None
        while not (self._urgent or self._settling or self._stopping):
            rest = self._linger_left()
            full = self.processor.pending_count() >= self.processor.batch_size
            if rest is None or rest <= 0 or full:
                return
            self._stir.clear()
            partials = self._partials.take()
            if partials:
                await partials_send(get_channel_layer(self.channel_layer_alias), partials)
                continue
            async with self.previews.during():  # a span may fall due meanwhile
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(rest):
                        await self._stir.wait()

    def _linger_left(self) -> float | None:
        """Seconds left before what waits must be flushed (``None``: no span or change
        waits)."""
        left = []
        if self.processor.pending_count():
            left.append(self.linger - self.processor.waited())
        with self._dirty_lock:
            if self._dirty:
                left.append(self._dirty_due - time.monotonic())
        return min(left) if left else None

    def _wake_threadsafe(self) -> None:
        wake = self._wake
        if wake is not None:
            self._on_loop_threadsafe(wake.set)
