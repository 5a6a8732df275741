"""What the live pipeline's flusher does when a flush fails: nothing blocks it for ever.

- The database is unreachable (``core.outages.caused_by_outage``): the flush's work is
  kept for the next one, which comes after a pause that doubles with each such failure, up to
  ``MAX_RETRY_DELAY_S``; logged once when the outage starts and once when it ends.
- The channel layer refuses a session's message: the session is marked again, and the next
  flush (after the same growing pause) reads and sends what it has not sent.
- Anything else: the flush is redone session by session, so one session's bad data never
  holds up another's; a session whose part fails again is left out of the live stream and
  logged — never retried in a loop (what was stored stays; its clients catch up from the
  database).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

from agentdash.core.outages import caused_by_outage
from agentdash.live.flush_writer import Batch
from agentdash.spans.span_processor import SpanSnapshot

logger = logging.getLogger("agentdash.live.pipeline")

MAX_RETRY_DELAY_S = 2.0

Write = Callable[..., Coroutine[Any, Any, list[Batch]]]  # (snapshots, dirty, *what was told)
Keep = Callable[[list[SpanSnapshot], dict[str, int | None]], None]


class FlushFaults:
    """The flusher's failure counts and what it does about failures (see the module
    docstring). ``keep(snapshots, dirty)`` puts work back for the next flush."""

    def __init__(self, *, retry_delay: float, keep: Keep) -> None:
        self.retry_delay = retry_delay
        self.failures = 0  # flushes (or sessions' parts of one) that failed
        self.unreachable = 0  # flushes in a row that found the database unreachable
        self.unsent = 0  # flushes in a row whose sends the channel layer refused
        self._keep = keep

    def pause(self) -> float:
        """How long to wait after a failed flush: ``retry_delay``, doubling with each flush
        in a row that found the database (or the channel layer) unreachable, at most
        ``MAX_RETRY_DELAY_S``."""
        streak = max(self.unreachable, self.unsent, 1)
        return min(self.retry_delay * 2 ** (streak - 1), MAX_RETRY_DELAY_S)

    def publishing(self, unsent: list[tuple[str, BaseException]]) -> None:
        """After a flush's sends: ``unsent`` are the sessions whose message the channel layer
        did not take (they were marked again). Logged once when sends start failing, once
        when they work again."""
        if not unsent:
            if self.unsent:
                logger.warning(
                    "live pipeline: the channel layer takes messages again after %d failed flushes",
                    self.unsent,
                )
                self.unsent = 0
            return
        self.failures += 1
        self.unsent += 1
        if self.unsent == 1:
            session_id, error = unsent[0]
            logger.error(
                "live pipeline: publishing to %d sessions failed (%s: %s, session %s); "
                "retried with backoff",
                len(unsent),
                type(error).__name__,
                error,
                session_id,
            )

    def keep_for_later(
        self, snapshots: list[SpanSnapshot], dirty: dict[str, int | None], error: Exception
    ) -> None:
        self.failures += 1
        self.unreachable += 1
        if self.unreachable == 1:
            logger.error(
                "live pipeline: the database is unreachable (%s); %d span versions wait, "
                "flushes are retried with backoff",
                error,
                len(snapshots),
            )
        self._keep(snapshots, dirty)

    def recovered(self) -> None:
        if self.unreachable:
            logger.warning(
                "live pipeline: the database is back after %d failed flushes", self.unreachable
            )
            self.unreachable = 0

    async def written(
        self,
        write: Write,
        snapshots: list[SpanSnapshot],
        dirty: dict[str, int | None],
        *told: Any,
    ) -> list[Batch] | None:
        """What ``write(snapshots, dirty, *told)`` returns; if it fails, what the module
        docstring says: ``None`` when the work was kept for later (the database is
        unreachable), else the batches of the sessions' parts written apart."""
        try:
            batches = await write(snapshots, dirty, *told)
        except Exception as exc:
            if caused_by_outage(exc):
                self.keep_for_later(snapshots, dirty, exc)
                return None
            logger.exception("live pipeline: a flush failed; trying it session by session")
            self.failures += 1
            return await self.write_apart(write, snapshots, dirty)
        self.recovered()
        return batches

    async def write_apart(
        self, write: Write, snapshots: list[SpanSnapshot], dirty: dict[str, int | None]
    ) -> list[Batch]:
        """Each session's part of a failed flush written on its own (see the module
        docstring); returns the batches of the parts that worked."""
        parts: dict[str, list[SpanSnapshot]] = {}
        for snapshot in snapshots:
            parts.setdefault(snapshot.sessions[0], []).append(snapshot)
        batches: list[Batch] = []
        for session_id in dict.fromkeys([*parts, *dirty]):
            mine, hint = parts.get(session_id, []), {session_id: dirty.get(session_id)}
            try:
                batches.extend(await write(mine, hint))
            except Exception as exc:
                if caused_by_outage(exc):
                    self.keep_for_later(mine, hint, exc)
                    continue
                self.failures += 1
                logger.exception(
                    "live pipeline: session %s: %d span versions and its new changes could not "
                    "be stored or read; left out of the live stream",
                    session_id,
                    len(mine),
                )
        return batches
