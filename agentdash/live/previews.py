"""Span versions sent before they are stored: the live pipeline's ``spans`` messages.

A span's change goes out once its flush has stored it, and a flush waits for the one before
(each a few database round trips: under load, tens of ms). While a flush writes, the spans
that have waited ``after`` seconds without being sent go to their sessions' clients as they
are, unstored and without a seq (docs/PROTOCOL.md, ``spans``); the stored change follows
with the flush that stores them and replaces what was shown. A quiet flusher stores and
publishes a span before it is due, so nothing is sent twice then.

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
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ThreadPoolExecutor

from channels.layers import get_channel_layer

from agentdash.core.threads import in_worker_thread, thread_pool_close
from agentdash.live.flush_writer import FlushWriter
from agentdash.live.groups import session_group
from agentdash.live.layer_send import groups_send
from agentdash.live.pages import MAX_SENT_BYTES, packed
from agentdash.spans.change_items import span_data_json, span_item, span_trimmed
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
    """Sends the spans a flush under way keeps waiting (see the module docstring)."""

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

    @contextlib.asynccontextmanager
    async def during_flush(self) -> AsyncIterator[None]:
        """Preview what falls due while the body (a flush's write) runs; on leaving, the
        preview under way is finished first: it goes out before the flush's changes."""
        if self.after is None:
            yield
            return
        done = asyncio.Event()
        task = asyncio.create_task(self._run(done))
        try:
            yield
        finally:
            done.set()
            await task

    async def close(self) -> None:
        """Let the preview thread go (the pipeline stops)."""
        thread, self._thread = self._thread, None
        if thread is not None:
            await thread_pool_close(thread)

    async def _run(self, done: asyncio.Event) -> None:
        assert self.after is not None
        while not done.is_set():
            began = time.monotonic()
            due, wait = self.processor.unsent_due(self.after)
            if due:
                try:
                    await self.send(due)
                except Exception:  # the stored changes follow: nothing is lost
                    logger.exception("live pipeline: previewing spans failed")
                # What falls due meanwhile gathers for a while (as spans do for a flush):
                # under a stream of spans, one message per session every ``gather`` at most
                # (counted from this one's start: a slow send is part of the wait).
                wait = max(max(wait or 0.0, self.gather) - (time.monotonic() - began), 0.0)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.after if wait is None else wait):
                    await done.wait()

    async def send(self, snapshots: Sequence[SpanSnapshot]) -> None:
        """Send ``snapshots`` of known sessions as ``spans`` messages, all sessions at once."""
        if self._prices_fresh():  # all in memory: made here, no hop to a thread and back
            pages = self.pages(snapshots)
        else:  # the price table is read first (the database is never asked on the loop)
            if self._thread is None:
                self._thread = ThreadPoolExecutor(1, thread_name_prefix="agentdash-live-previews")
            pages = await in_worker_thread(self.pages, executor=self._thread)(snapshots)
        layer = get_channel_layer(self.channel_layer_alias)
        assert layer is not None  # the settings always configure one
        messages = [
            (session_group(session_id), {"type": "session.spans", "pages": texts})
            for session_id, texts in pages.items()
        ]
        for outcome in await groups_send(layer, messages):
            if isinstance(outcome, BaseException):
                logger.warning("live pipeline: a preview was not published: %r", outcome)

    def pages(self, snapshots: Sequence[SpanSnapshot]) -> dict[str, list[str]]:
        """By session, the ``spans`` messages of ``snapshots`` of known sessions."""
        versions: dict[str, list[SpanVersion]] = {}
        for snapshot in snapshots:
            owner = self.writer.known(snapshot)
            if owner is not None and self._budget.take(owner[0]):
                session_id, run_id = owner
                version = snapshot.version(session_id=session_id, run_id=run_id)
                versions.setdefault(session_id, []).append(version)
        self.sent += sum(len(found) for found in versions.values())
        prices = self._prices()
        return {session_id: spans_pages(found, prices) for session_id, found in versions.items()}

    def _prices_fresh(self) -> bool:
        """Whether the price book is read and fresh (``pages`` then asks no database)."""
        return self._book is not None and time.monotonic() - self._book[0] <= PRICES_FRESH_S

    def _prices(self) -> PriceBook:
        if not self._prices_fresh():
            self._book = (time.monotonic(), price_book().read())
        assert self._book is not None
        return self._book[1]


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
    datas = [span_item(version, prices, seq=0) for version in versions]
    texts = [
        span_data_json(data, version) or json.dumps(data, ensure_ascii=False)
        for data, version in zip(datas, versions, strict=True)
    ]
    head, tail = '{"type": "spans", "items": [', "]}"
    trimmed = lambda at: span_trimmed(datas[at])  # noqa: E731
    return [text for _, _, text in packed(texts, head, tail, MAX_SENT_BYTES, trimmed)]
