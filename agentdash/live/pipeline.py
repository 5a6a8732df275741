"""The live pipeline: span snapshots and change pokes in, one batched message per session out.

One :class:`LivePipeline` per process (``live_pipeline()``). Its flusher runs on one event
loop and sleeps until there is work: a span snapshot, or a session marked by :func:`notify`.
Then it lets a run's step gather for ``linger`` (40 ms; its spans' previews go out meanwhile;
not when someone waits: ``flusher_lifecycle``) and flushes, on a database thread of its own
(a flush with nothing to store whose changes all came with their items made goes from
memory, on the loop: ``FlushWriter.told``):
it stores the waiting span versions in one transaction (each gets its session's next seq),
reads, for every session touched, the changes after the last seq this process published for
it (not what it stored or was told with its items: the rest *from the database*, a few
queries for all sessions together) and sends each session's changes to its group in **one**
``group_send``. While a flush runs, the next one's work gathers, so under load the batches
grow instead of the flushes multiplying. The database is the truth: a client that misses a
message fills the gap from it (see ``consumers``).

The live app connects the pipeline when Django starts (``LiveConfig.ready``): it hears every
committed change (``changes.announcements``) and streams every run (``runs.streaming``).

Nothing is dropped: under load, versions of one span coalesce (the latest wins, an ended one
is final); past ``high_water`` waiting spans, :meth:`LivePipeline.backpressure` makes the
producing run wait until the flusher has caught up.

Nothing blocks it for ever either: what agents produce is made storable before it is stored
(``spans.span_version``), one bad span version never holds up the rest
(``spans_store_isolating``), and a failed flush is handled as ``flush_faults`` says.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import threading
import time
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from channels.layers import get_channel_layer

from agentdash.changes.announcements import ItemsMaker
from agentdash.core.conf import agentdash_setting
from agentdash.core.loop_thread import LoopThread
from agentdash.core.metrics import FLUSH_SECONDS
from agentdash.core.outages import until_reachable
from agentdash.core.threads import in_worker_thread
from agentdash.live.flush_faults import FlushFaults
from agentdash.live.flush_writer import FlushWriter
from agentdash.live.flusher_lifecycle import FlusherLifecycle
from agentdash.live.groups import changes_send, session_group
from agentdash.live.partials import PartialQueue, partials_joined, partials_send
from agentdash.live.previews import SpanPreviews
from agentdash.live.protocol import partial_message
from agentdash.spans.otlp_out import otlp_out_uninstall
from agentdash.spans.span_processor import LiveSpanProcessor, SpanSnapshot

logger = logging.getLogger(__name__)
MAX_DIRTY = 10_000
STOP_ROUNDS = 100  # flushes ``stop`` tries before giving up on what is left


class LivePipeline(FlusherLifecycle):
    """See the module docstring. ``install`` once per process that runs agents; ``start`` on
    the event loop that should publish (idempotent; daphne has no lifespan, so the consumer
    and the executors call it lazily)."""

    def __init__(
        self,
        *,
        linger: float = 0.040,
        preview_after: float | None = 0.003,
        preview_gather: float = 0.002,
        idle_timeout: float = 1.0,
        retry_delay: float = 0.1,
        batch_size: int = 200,
        flush_limit: int = 250,
        high_water: int = 5_000,
        low_water: int | None = None,
        publish_limit: int = 1_000,
        channel_layer_alias: str = "default",
    ) -> None:
        self.linger = linger
        self.idle_timeout = idle_timeout  # a safety net: every producer wakes the flusher
        self.flush_limit = flush_limit  # per transaction: a run's events wait for its commit
        self.high_water = high_water
        self.low_water = high_water // 2 if low_water is None else low_water
        self.channel_layer_alias = channel_layer_alias
        self.processor = LiveSpanProcessor(batch_size=batch_size, wake=self._stir_threadsafe)
        self.writer = FlushWriter(publish_limit=publish_limit, late=self._announced_now)
        self.previews = SpanPreviews(
            processor=self.processor,
            writer=self.writer,
            after=preview_after,
            gather=preview_gather,
            channel_layer_alias=channel_layer_alias,
        )
        self.processor.unsent = self.previews.wake_threadsafe
        self.backpressure_waits = 0  # how often a producer had to wait (for tests and stats)
        self.settle_waits = 0  # how often a run's outcome waited for the flusher (likewise)
        self.settle_stores = 0  # how often its spans were stored without the flusher
        self.faults = FlushFaults(retry_delay=retry_delay, keep=self._keep)
        self._dirty: dict[str, int | None] = {}
        self._dirty_due = math.inf  # when the changes marked since the last flush are due
        self._announced: dict[str, list[ItemsMaker]] = {}  # the items dirty sessions were told
        self._untold: set[str] = set()  # dirty sessions marked (also) without their items
        self._settling: dict[str, int] = {}  # invocation → its settle calls waiting
        self._partials = PartialQueue()
        self._dirty_lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None
        self._stir: asyncio.Event | None = None
        self._urgent = False
        self._flushed: asyncio.Event | None = None
        self._thread: ThreadPoolExecutor | None = None  # the flusher's database thread
        self._loop_thread: LoopThread | None = None  # set by ``start_thread``
        self._start_lock = threading.Lock()
        self._stopping = False

    # ── Set-up ──────────────────────────────────────────────────────────────────────────────
    def uninstall(self) -> None:
        """Stop taking snapshots and forget everything waiting or remembered (the SDK cannot
        remove a processor, so it stays registered, inert); stop copying spans to a
        collector, sending what waits. For tests and shutdown: call it after :meth:`stop`."""
        otlp_out_uninstall()
        self.processor.enabled = False
        self.processor.clear()
        with self._dirty_lock:
            self._dirty.clear()
            self._announced.clear()
            self._untold.clear()
            self._partials.clear()
        self.writer.forget()

    @property
    def failures(self) -> int:
        """Flushes (or sessions' parts of one) that failed so far."""
        return self.faults.failures

    # ── Producers ───────────────────────────────────────────────────────────────────────────
    def notify_threadsafe(
        self,
        session_id: str,
        *,
        seq: int | None = None,
        items: ItemsMaker | None = None,
        prompt: bool = False,
    ) -> None:
        """Mark the session for the next flush, from any thread (e.g. an ``on_commit``
        callback in a worker thread). ``seq``: the first new change, when known; ``items``:
        makes the new changes' items (``changes.announcements``). A session whose every
        mark since the last flush came with its items is sent without reading the database;
        one mark without them, and the flush reads its changes (the items it was told, it
        still takes as told). The flush comes within ``linger`` (more of a run's step
        gathers meanwhile), at once when ``prompt`` (someone waits to see it: an export's
        spans, a page left behind)."""
        with self._dirty_lock:
            first = not self._dirty
            due = time.monotonic() + (0.0 if prompt else self.linger)
            self._dirty_due = min(self._dirty_due, due)
            if session_id in self._dirty:
                known = self._dirty[session_id]
                if known is not None and (seq is None or seq < known):
                    self._dirty[session_id] = seq
            elif len(self._dirty) < MAX_DIRTY or self.running:
                self._dirty[session_id] = seq
            else:
                return  # too many marked with no flusher running: the database has it all
            if items is None:
                self._untold.add(session_id)
            elif self.running:
                self._announced.setdefault(session_id, []).append(items)
            else:
                self._untold.add(session_id)
        if prompt:
            self._stir_threadsafe()  # a lingering flusher looks again: this is due now
        elif first:
            self._wake_threadsafe()

    def _announced_now(self, session_ids: Collection[str]) -> dict[str, list[ItemsMaker]]:
        """The makers announced for ``session_ids`` since the last flush took its work (kept
        for the next one): the writer's ``late``, from its thread."""
        with self._dirty_lock:
            return {s: list(self._announced[s]) for s in session_ids if s in self._announced}

    def partial_threadsafe(self, session_id: str, message: dict[str, Any]) -> None:
        """Queue a ``session.partial`` message for the next flush, from any thread."""
        if self._partials.put(session_id, message):
            self._stir_threadsafe()

    async def publish_partial(
        self, *, session_id: str, run_id: int | None, invocation_id: str, author: str, text: str
    ) -> None:
        """Send streamed model text to the session's clients as a ``partial`` message (not
        stored, no seq; the stored event replaces it) at the flusher's next look — at once
        while it lingers, else ahead of the changes of the flush under way; chunks that meet
        go out as one message. Without a running flusher it is sent at once."""
        message: dict[str, Any] = partial_message(
            run_id=run_id, invocation_id=invocation_id, author=author, text=text
        )
        message["type"] = "session.partial"
        if self.running:
            self.partial_threadsafe(session_id, message)
            return
        layer = get_channel_layer(self.channel_layer_alias)
        assert layer is not None  # the settings always configure one
        for part in partials_joined([message]):  # a long text in several
            await layer.group_send(session_group(session_id), part)

    async def backpressure(self) -> None:
        """Return at once unless more than ``high_water`` snapshots wait; then wait until the
        flusher has brought them down to ``low_water``. Call it between a run's steps."""
        if self.processor.pending_count() <= self.high_water:
            return
        if not self.running:  # nothing to wait for: it flushes once it is started
            return
        self.backpressure_waits += 1
        await self._on_flusher_loop(
            self._wait_while(lambda: self.processor.pending_count() > self.low_water)
        )

    async def settle(self, invocation_id: str, *, patience: float | None = None) -> None:
        """Return once every span version of the invocation that came in so far is stored.
        What the caller records next, a run's outcome, then gets a higher seq than every
        change of the run's spans: a client never gets the run's end before its spans' ends.
        The flushes that store a settling run's spans leave its totals to its end
        (``run_conclude``), which tells them: no change of their own on the way.

        The flusher stores them: it takes the invocation's spans first, and at once, and
        the flush that stores them reads the session's changes up to them, so the run's
        earlier changes go out as they were before it ended (a change item carries its row
        as it is when read). Should the flusher not have stored them within ``patience``
        seconds (by default half the time left before the reaper takes a run whose
        heartbeat stopped for dead: ``settle_patience``), or not run at all, they are
        stored here, with changes announced as other writers' are: the order of seqs holds
        whatever the flusher does. A database outage is waited out, as the outcome's own
        write does."""
        if not self.processor.waiting_for(invocation_id):
            return
        if self.running:
            self.settle_waits += 1
            with self._dirty_lock:
                self._settling[invocation_id] = self._settling.get(invocation_id, 0) + 1
            waiting = self._wait_while(
                lambda: self.processor.waiting_for(invocation_id),
                settle_patience() if patience is None else patience,
            )
            try:
                with contextlib.suppress(TimeoutError):
                    await self._on_flusher_loop(waiting)
            finally:
                with self._dirty_lock:
                    left = self._settling.pop(invocation_id, 1) - 1
                    if left:
                        self._settling[invocation_id] = left
        if not self.processor.waiting_for(invocation_id):
            return
        # No flusher, or one stuck (a flush under way may hold some of these versions too:
        # storing a version twice is harmless, an ended span is final).
        self.settle_stores += 1
        snapshots = self.processor.take_of(invocation_id)
        writer = FlushWriter(publish_limit=self.writer.publish_limit)  # caches of its own
        await until_reachable(
            lambda: in_worker_thread(writer.store)(snapshots),
            what=f"storing the spans of invocation {invocation_id}",
        )

    # ── The flusher ─────────────────────────────────────────────────────────────────────────
    async def flush(self) -> int:
        """Store the waiting spans and publish every touched session once. Returns the
        number of change items published. What fails is handled as ``flush_faults`` says:
        kept for the next flush while the database or the channel layer is unreachable,
        redone session by session otherwise."""
        with self._dirty_lock:
            settling = set(self._settling)
        snapshots = self.processor.take(self.flush_limit, first=settling)
        with self._dirty_lock:
            dirty, self._dirty = self._dirty, {}
            self._dirty_due = math.inf
            announced, self._announced = self._announced, {}
            untold, self._untold = self._untold, set()
        partials = self._partials.take()
        if partials:  # first: they need no database, and each came before what follows
            await partials_send(get_channel_layer(self.channel_layer_alias), partials)
        if not snapshots and not dirty:
            return 0
        # Nothing to store and all told (a run's end): sent from memory, here.
        batches = None if snapshots else self.writer.told(dirty, announced, untold)
        if batches is None:
            if self._thread is None:
                self._thread = ThreadPoolExecutor(1, thread_name_prefix="agentdash-live-flusher")
            # A thread of its own: never queued behind the runs' or the consumers' calls.
            write = in_worker_thread(self.writer.write, executor=self._thread)
            async with self.previews.during():  # what waits meanwhile goes out unstored
                told = (announced, untold, settling)  # a settling run's end tells its totals
                batches = await self.faults.written(write, snapshots, dirty, *told)
            if batches is None:  # kept for the next flush
                return 0
        self.processor.stored()
        partials = self._partials.take()  # queued during the write: before what it read
        if partials:
            await partials_send(get_channel_layer(self.channel_layer_alias), partials)
        outcomes = await changes_send(get_channel_layer(self.channel_layer_alias), batches)
        sent = 0
        unsent: list[tuple[str, BaseException]] = []
        for batch, outcome in zip(batches, outcomes, strict=True):
            if outcome is not None:
                # Stored, not sent: the session is marked again, so the next flush reads and
                # sends it (open sockets hear nothing else until then).
                unsent.append((batch.session_id, outcome))
                self.notify_threadsafe(batch.session_id, prompt=True)
                continue
            self.writer.published(batch)
            sent += len(batch.items)
            if batch.more:  # a long backlog: the next page goes out with the next flush, now
                self.notify_threadsafe(batch.session_id, prompt=True)
        self.faults.publishing(unsent)
        return sent

    async def _run(self) -> None:
        assert self._wake is not None
        final_rounds = STOP_ROUNDS
        while True:
            stopping = self._stopping
            if not stopping:
                if not self._has_work():
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(self.idle_timeout):
                            await self._wake.wait()
                await self._linger()
            self._wake.clear()  # producers wake it again for anything taken after this
            self._urgent = False
            failures = self.faults.failures
            try:
                with FLUSH_SECONDS.time():
                    await self.flush()
            except Exception:  # never let the flusher die
                logger.exception("live pipeline: flush failed")
                self.faults.failures += 1
            self._signal_flushed()
            if stopping:
                final_rounds -= 1
                if final_rounds <= 0 or not self._has_work():
                    return
            elif self.faults.failures != failures:  # the database is unwell: don't hammer it
                await asyncio.sleep(self.faults.pause())

    def _keep(self, snapshots: list[SpanSnapshot], dirty: dict[str, int | None]) -> None:
        """Put a flush's work back for the next one."""
        self.processor.restore(snapshots)
        for session_id, seq in dirty.items():
            self.notify_threadsafe(session_id, seq=seq)

    def _has_work(self) -> bool:
        return bool(self.processor.pending_count() or self._dirty or self._partials)


_pipeline: LivePipeline | None = None
_pipeline_lock = threading.Lock()


def live_pipeline() -> LivePipeline:
    """This process's pipeline (created on first use; not installed or started)."""
    global _pipeline
    if _pipeline is None:
        with _pipeline_lock:
            if _pipeline is None:
                _pipeline = LivePipeline()
    return _pipeline


def settle_patience() -> float:
    """How long :meth:`LivePipeline.settle` waits for the flusher before it stores a run's
    spans itself: half the time a run whose heartbeat stopped (the worker stops it before
    it settles) has left until the reaper takes it for dead."""
    stale = float(agentdash_setting("RUN_STALE_AFTER_S"))
    beat = float(agentdash_setting("RUN_HEARTBEAT_S"))
    return max(stale - beat, 0.0) / 2


async def notify(session_id: str, *, seq: int | None = None) -> None:
    """Have the session's new changes published within a flush (cheap: marks it dirty).

    Changes recorded with ``changes.services.session_change_next`` announce themselves when
    their transaction commits; call this only for writes that bypass it."""
    live_pipeline().notify_threadsafe(session_id, seq=seq)


def notify_threadsafe(
    session_id: str,
    *,
    seq: int | None = None,
    items: ItemsMaker | None = None,
    prompt: bool = False,
) -> None:
    """:func:`notify` for sync code and ``transaction.on_commit`` callbacks, any thread
    (``items``, ``prompt``: see :meth:`LivePipeline.notify_threadsafe`)."""
    live_pipeline().notify_threadsafe(session_id, seq=seq, items=items, prompt=prompt)
