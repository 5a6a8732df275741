"""Span versions sent before they are stored: the live pipeline's ``spans`` messages.

A span's change goes out once its flush has stored it: a flush starts after the step's spans
gathered for up to 40 ms (the pipeline's ``linger``) and waits for the one before (each a
few database round trips: under load, tens of ms). Meanwhile — while a flush writes, or the
flusher waits for a step's spans to gather — the versions that have waited ``after`` seconds
without being sent go to their sessions' clients as they are, unstored and without a seq
(docs/PROTOCOL.md, ``spans``); the stored change follows with the flush that stores them and
replaces what was shown. A span that ends within ``after`` goes once, ended; one a flush
stores before it is due is not previewed at all. The previews look for what falls due as it
falls due (woken by the span processor when a version comes while none waits) and hand it to
one sender (:class:`Outbox`): a publish waiting for Redis's answer never holds up the next
look.

Built from what this process already knows (the flush writer's sessions and runs, a price
table read at most a second ago; a span whose session it has not looked up yet waits for
its flush) on the flusher's loop, with no hop to a thread and back: in a busy process each
hop waits for the interpreter. Once a second, the price table is read first, on a thread of
the previews' own, never the flusher's database thread: a preview never waits for a flush.
All sessions' messages go to the channel layer together (``layer_send``). What fails is
logged and lost: the stored changes carry everything.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from channels.layers import get_channel_layer

from agentdash.core.loop_thread import call_on_loop
from agentdash.core.threads import in_worker_thread, thread_pool_close
from agentdash.live.flush_writer import FlushWriter
from agentdash.live.groups import session_group
from agentdash.live.layer_send import GroupMessage, groups_send
from agentdash.live.pages import MAX_SENT_BYTES, packed
from agentdash.spans.change_items import span_trimmed, span_version_data
from agentdash.spans.span_processor import LiveSpanProcessor, SpanSnapshot
from agentdash.spans.span_version import SpanVersion
from agentdash.spans.totals import price_book
from agentdash.spans.usage import PriceBook

logger = logging.getLogger(__name__)

PER_SESSION_PER_S = 200.0
"""Span versions previewed per session per second at most (a burst of as many at once, then
that rate): a person follows a session's steps at tens a second, and past that a preview is
work done twice for nobody — a session streaming thousands a second (an agent fanning out
to a thousand tool calls) gets them when they are stored, at the full rate of the store."""

MAX_SESSIONS = 10_000
"""Sessions whose preview budget is remembered; past it, every budget starts afresh."""

PRICES_FRESH_S = 1.0
"""How long a preview's price book is used before the table is read again (a cost shown
before a span is stored may be that old; its stored change has the table as it is)."""


class SpanPreviews:
    """Sends the span versions the flusher keeps waiting (see the module docstring)."""

    def __init__(
        self,
        *,
        processor: LiveSpanProcessor,
        writer: FlushWriter,
        after: float | None,
        gather: float,
        channel_layer_alias: str = "default",
    ) -> None:
        self.processor = processor
        self.writer = writer
        self.after = after  # None: never
        self.gather = gather
        self.channel_layer_alias = channel_layer_alias
        self.sent = 0  # span versions previewed so far (for tests and stats)
        self._thread: ThreadPoolExecutor | None = None
        self._book: tuple[float, PriceBook] | None = None
        self._budget = Budget(PER_SESSION_PER_S)
        self._woken: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None

    @contextlib.asynccontextmanager
    async def during(self) -> AsyncIterator[None]:
        """Preview what falls due while the body (a flush's write, or the flusher's wait for
        a step's spans to gather) runs; on leaving, the preview under way is finished first:
        it goes out before the flush's changes."""
        if self.after is None:
            yield
            return
        done, woken = asyncio.Event(), asyncio.Event()
        self._woken = (asyncio.get_running_loop(), woken)
        task = asyncio.create_task(self._run(done, woken))
        try:
            yield
        finally:
            self._woken = None
            done.set()
            woken.set()
            await task

    def wake_threadsafe(self) -> None:
        """A span version came when none was waiting to be sent (from any thread): the
        previews under way time its turn from now, rather than at their next look."""
        woken = self._woken
        if woken is None:
            return
        loop, event = woken
        call_on_loop(loop, event.set)

    async def close(self) -> None:
        """Let the preview thread go (the pipeline stops)."""
        thread, self._thread = self._thread, None
        if thread is not None:
            await thread_pool_close(thread)

    async def _run(self, done: asyncio.Event, woken: asyncio.Event) -> None:
        """Take what falls due as it falls due (``gather`` apart at least) and hand it to
        the sender: a publish in flight never holds up the next look."""
        assert self.after is not None
        outbox = Outbox(self._publish)
        try:
            while not done.is_set():
                woken.clear()
                began = time.monotonic()
                due, wait = self.processor.unsent_due(self.after)
                if due:
                    try:
                        outbox.put(await self.messages(due))
                    except Exception:  # the stored changes follow: nothing is lost
                        logger.exception("live pipeline: previewing spans failed")
                    wait = max(max(wait or 0.0, self.gather) - (time.monotonic() - began), 0.0)
                # Until the next one is due; none waiting: until one comes (``wake_threadsafe``).
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(wait):
                        await woken.wait()
        finally:
            await outbox.drained()

    async def send(self, snapshots: Sequence[SpanSnapshot]) -> None:
        """Send ``snapshots`` of known sessions as ``spans`` messages, all sessions at once."""
        await self._publish(await self.messages(snapshots))

    async def messages(self, snapshots: Sequence[SpanSnapshot]) -> list[GroupMessage]:
        """The ``session.spans`` group messages of ``snapshots`` of known sessions."""
        prices = self._fresh_prices()
        if prices is not None:
            # All in memory, with the book as it was found fresh (not asked again: it may
            # have aged meanwhile): made here, no hop to a thread and back.
            pages = self.pages(snapshots, prices)
        else:  # the price table is read first (the database is never asked on the loop)
            if self._thread is None:
                self._thread = ThreadPoolExecutor(1, thread_name_prefix="agentdash-live-previews")
            pages = await in_worker_thread(self.pages, executor=self._thread)(snapshots)
        return [
            (session_group(session_id), {"type": "session.spans", "pages": texts})
            for session_id, texts in pages.items()
        ]

    async def _publish(self, messages: list[GroupMessage]) -> None:
        layer = get_channel_layer(self.channel_layer_alias)
        assert layer is not None  # the settings always configure one
        for outcome in await groups_send(layer, messages):
            if isinstance(outcome, BaseException):
                logger.warning("live pipeline: a preview was not published: %r", outcome)

    def pages(
        self, snapshots: Sequence[SpanSnapshot], prices: PriceBook | None = None
    ) -> dict[str, list[str]]:
        """By session, the ``spans`` messages of ``snapshots`` of known sessions, priced
        with ``prices`` (none given: the book, read if it is not fresh — not on a loop)."""
        versions: dict[str, list[SpanVersion]] = {}
        for snapshot in snapshots:
            owner = self.writer.known(snapshot)
            if owner is not None and self._budget.take(owner[0]):
                session_id, run_id = owner
                version = snapshot.version(session_id=session_id, run_id=run_id)
                versions.setdefault(session_id, []).append(version)
        self.sent += sum(len(found) for found in versions.values())
        prices = self._prices() if prices is None else prices
        return {session_id: spans_pages(found, prices) for session_id, found in versions.items()}

    def _fresh_prices(self) -> PriceBook | None:
        """The price book when it is read and fresh (a page made with it asks no database)."""
        book = self._book
        return (
            book[1] if book is not None and time.monotonic() - book[0] <= PRICES_FRESH_S else None
        )

    def _prices(self) -> PriceBook:
        found = self._fresh_prices()
        if found is None:
            found = price_book().read()
            self._book = (time.monotonic(), found)
        return found


class Outbox:
    """Group messages published in the order put, by one sender at a time: what is put while
    a publish is in flight goes with the next one, a group's messages joined into one (its
    pages in order). Over a network layer a publish waits for its answer; meanwhile the
    next messages are made, not held up."""

    def __init__(self, publish: Callable[[list[GroupMessage]], Awaitable[None]]) -> None:
        self._publish = publish
        self._waiting: list[GroupMessage] = []
        self._sender: asyncio.Task[None] | None = None

    def put(self, messages: list[GroupMessage]) -> None:
        self._waiting += messages
        if self._waiting and (self._sender is None or self._sender.done()):
            self._sender = asyncio.create_task(self._send())

    async def drained(self) -> None:
        """Return once everything put is published."""
        while self._sender is not None and not self._sender.done():
            await asyncio.shield(self._sender)

    async def _send(self) -> None:
        while self._waiting:
            taken, self._waiting = self._waiting, []
            try:
                await self._publish(_joined(taken))
            except Exception:  # logged and lost: the stored changes follow
                logger.exception("live pipeline: publishing previews failed")


def _joined(messages: list[GroupMessage]) -> list[GroupMessage]:
    """One message per group: the pages of its messages, in order."""
    joined: dict[str, dict[str, Any]] = {}
    for group, message in messages:
        found = joined.get(group)
        if found is None:
            joined[group] = {**message, "pages": list(message["pages"])}
        else:
            found["pages"] += message["pages"]
    return list(joined.items())


class Budget:
    """A token bucket per session: ``rate`` tokens a second, as many at most."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self._left: dict[str, tuple[float, float]] = {}  # session → (tokens, when counted)

    def take(self, session_id: str) -> bool:
        """Whether the session has a token left now (taking it)."""
        now = time.monotonic()
        if len(self._left) >= MAX_SESSIONS and session_id not in self._left:
            self._left.clear()
        tokens, then = self._left.get(session_id, (self.rate, now))
        tokens = min(self.rate, tokens + (now - then) * self.rate)
        if tokens < 1.0:
            self._left[session_id] = (tokens, now)
            return False
        self._left[session_id] = (tokens - 1.0, now)
        return True


def spans_pages(versions: Sequence[SpanVersion], prices: PriceBook) -> list[str]:
    """``versions`` (of one session) as ``spans`` messages, encoded, each within the send
    limit: a span too large alone goes without its attributes and events, as in ``changes``.
    The data of each is a ``span`` change's, ``summary.seq`` 0 (it has none yet)."""
    made = [span_version_data(0, version, prices) for version in versions]
    datas = [data for data, _ in made]
    texts = [text or json.dumps(data, ensure_ascii=False) for data, text in made]
    head, tail = '{"type": "spans", "items": [', "]}"
    trimmed = lambda at: span_trimmed(datas[at])  # noqa: E731
    return [text for _, _, text in packed(texts, head, tail, MAX_SENT_BYTES, trimmed)]
