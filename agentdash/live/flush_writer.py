"""The live pipeline's database side: one flush's writes and reads, run in a worker thread.

Kept apart from ``pipeline`` so the event-loop side stays small: everything here is blocking
Django code, called once per flush on the pipeline's own database thread — but
:meth:`FlushWriter.told`, which asks no database and runs on the loop.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from django.db import IntegrityError

from agentdash.agent_sessions.models import AgentSession
from agentdash.changes.announcements import ItemsMade, ItemsMaker, announce_on_commit
from agentdash.changes.items import (
    Item,
    items_after_many,
    items_at,
)
from agentdash.changes.selectors import session_last_seq
from agentdash.core.outages import caused_by_outage
from agentdash.core.sqlite.base import writes_first
from agentdash.live.pages import ChangesPage, changes_pages
from agentdash.live.told import Late, announced_items, gaps_after, late_filled, seq_of
from agentdash.runs.lifecycle import run_usage_changed
from agentdash.runs.models import Run
from agentdash.spans.change_items import span_change_item
from agentdash.spans.services import (
    SpanWrite,
    spans_store,
    spans_store_isolating,
)
from agentdash.spans.span_processor import SpanSnapshot
from agentdash.spans.span_version import SpanVersion
from agentdash.spans.totals import price_book, prices_shared

MAX_REMEMBERED = 10_000
ANNOUNCED_PAGES = 8
"""How many pages (``publish_limit``) of announced items a flush makes for one session."""


@dataclass(frozen=True)
class Batch:
    """What one flush sends to one session: its change items after ``after`` (``more``: the
    page was full, the rest goes with the next flush), and the messages that carry them,
    encoded once here, whatever the number of clients (off the event loop, but for the few
    items of a flush made from memory: :meth:`FlushWriter.told`)."""

    session_id: str
    after: int
    items: list[Item]
    more: bool
    pages: list[ChangesPage] = field(default_factory=list)


class FlushWriter:
    """Stores span versions and reads what to publish; remembers, per session, the last seq
    this process published (``published``) so the next flush starts after it."""

    def __init__(
        self,
        *,
        publish_limit: int,
        announced_limit: int | None = None,
        late: Late | None = None,
    ) -> None:
        """``late``: what has been announced (with its items) since a flush took its work, for
        the sessions it is given — a change committed while the flush stored fills its gap
        from there, not from the database."""
        self.publish_limit = publish_limit
        self._late = late
        # Items announced with their writes are made from memory up to this many a session and
        # flush (past it, the rest is read back): more than a page, as the flush's own spans —
        # a flusher that fell behind a fast sender would otherwise read every span of it back.
        self.announced_limit = announced_limit or publish_limit * ANNOUNCED_PAGES
        self._lock = threading.Lock()
        self._marks: dict[str, int] = {}
        self._behind: set[str] = set()  # sessions whose last batch was a full page
        self._sessions: set[str] = set()  # stored sessions seen (a positive answer is stable)
        self._runs: dict[str, int] = {}  # invocation id → run id

    def write(
        self,
        snapshots: Sequence[SpanSnapshot],
        dirty: Mapping[str, int | None],
        announced: Mapping[str, Sequence[ItemsMaker]] | None = None,
        untold: Collection[str] = (),
        ending: Collection[str] = (),
    ) -> list[Batch]:
        """Store ``snapshots`` (one transaction), then read, for each session they touched
        and each session in ``dirty`` (session → first new seq, if known), what to publish.
        ``announced`` (a dirty session → what makes the changes it was marked for with
        their items) is taken as told, not read back; a dirty session not in ``untold``
        (marked for other changes too) and in ``announced`` needs no read at all. The runs
        of the invocations ``ending`` (settling: their end is recorded next, with their
        totals) get no change of their totals here. On SQLite the write goes before the
        other writers waiting in the process: every client watching is waiting for it."""
        ended = {self._runs.get(invocation_id) for invocation_id in ending}
        with writes_first(), prices_shared():  # spans and runs priced from one read
            return self._write(snapshots, dirty, announced or {}, untold, ended)

    def _write(
        self,
        snapshots: Sequence[SpanSnapshot],
        dirty: Mapping[str, int | None],
        announced: Mapping[str, Sequence[ItemsMaker]],
        untold: Collection[str],
        ended: Collection[int | None],
    ) -> list[Batch]:
        hints: dict[str, int | None] = dict(dirty)
        versions = self._versions(snapshots)
        # (Not one transaction with the runs' usage changes below: foreign keys are checked
        # at the outermost commit, where ``_store``'s fallback for a vanished session or
        # run would no longer see the failure.)
        writes, as_given = self._store(versions)
        used = {  # runs whose model calls' totals grew, but those whose end tells them next
            (session_id, run_id) for session_id, run_id in _runs_used(versions, writes)
            if run_id not in ended
        }  # fmt: skip
        # A run's totals are part of its data: each run whose totals grew is a change of its
        # own, sent with the spans — read with the runs whose changes were announced to this
        # flush (one read of them all), not read back with the session's other changes.
        regrown = run_usage_changed(runs=used) if used else {}
        fresh, ours, full = announced_items(announced, regrown, self.announced_limit)
        prices = price_book()
        for version, write in zip(versions, writes, strict=True):
            if write.seq is None or version.session_id is None:
                continue
            known = hints.get(version.session_id)
            hints[version.session_id] = write.seq if known is None else min(known, write.seq)
            if not as_given:  # some were stored reduced: what was stored is read back
                continue
            item = span_change_item(write.seq, version, prices)
            fresh[(version.session_id, write.seq)] = item["data"]
            ours.setdefault(version.session_id, []).append(item)
        afters = {session_id: self._after(session_id, hint) for session_id, hint in hints.items()}
        told = {
            s
            for s in ours
            if s not in full and (s not in dirty or (s in announced and s not in untold))
        }
        found = self._in_line(ours, afters, told)
        unread = {s: after for s, after in afters.items() if s not in found}
        read = items_after_many(unread, limit=self.publish_limit, fresh=fresh)
        return [
            Batch(
                session_id=session_id,
                after=afters[session_id],
                items=items,
                # Read back, a full page may have left changes behind; sent from memory, all
                # of this flush's own went (however many: the flush took at most its limit).
                more=session_id in read and len(items) >= self.publish_limit,
                pages=changes_pages(items, replay=False),
            )
            for session_id, items in (found | read).items()
            if items
        ]

    def told(
        self,
        dirty: Mapping[str, int | None],
        announced: Mapping[str, Sequence[ItemsMaker]],
        untold: Collection[str],
    ) -> list[Batch] | None:
        """What a flush with no spans to store sends, made from memory on the caller's thread
        (no database: the event loop's, without a hop), when every change it was marked for
        came announced with its items (a run's end, an event) and they run on from what was
        published; ``None`` when anything needs the database — a change to read back, a
        gap, where publishing starts unknown (no seq published here, none told): the flush
        then goes by :meth:`write`."""
        makers = [make for session_id in dirty for make in announced.get(session_id, ())]
        if (
            untold
            or set(announced) != set(dirty)
            or not all(isinstance(m, ItemsMade) for m in makers)
        ):
            return None
        afters = {s: self._after_known(s, hint) for s, hint in dirty.items()}
        _, ours, full = announced_items(announced, {}, self.announced_limit)
        batches = []
        for session_id, made in ours.items():
            after = afters[session_id]
            items = sorted((i for i in made if after is not None and i["seq"] > after), key=seq_of)
            if after is None or session_id in full or gaps_after(after, [seq_of(i) for i in items]):
                return None
            if items:
                pages = changes_pages(items, replay=False)
                batches.append(Batch(session_id, after, items, more=False, pages=pages))
        return batches

    def _in_line(
        self, ours: Mapping[str, list[Item]], afters: Mapping[str, int], told: Collection[str]
    ) -> dict[str, list[Item]]:
        """The sessions whose only new changes are this flush's spans and those announced
        with their items (``told``: nothing else marked them), right after what was published
        (``afters``): they go out as stored — nothing can sit between seqs that run in line.
        The others are read from the database (what other writers, here or elsewhere,
        recorded), with what is known taken from memory."""
        found: dict[str, list[Item]] = {}
        gaps: dict[str, list[int]] = {}
        for session_id, made in ours.items():
            if session_id not in told:
                continue
            # What is at or below where publishing starts has gone out already: a change
            # announced after an earlier flush had read it back (its announcement came after
            # seqs taken beside it), which would otherwise make this flush read back too.
            after = afters[session_id]
            items = sorted((i for i in made if i["seq"] > after), key=lambda i: i["seq"])
            found[session_id] = items
            missing = gaps_after(after, [i["seq"] for i in items])
            if missing:
                gaps[session_id] = missing
        # A change committed while this flush stored its spans, announced after the flush
        # took its work (a run's next event, written between the flush's start and its own
        # seqs): made from its announcement when it came with its items, else read (those
        # few alone); the rest is sent as it is known.
        late_filled(found, gaps, afters, self._late, self.publish_limit)
        filled = items_at({s: m for s, m in gaps.items() if len(m) <= self.publish_limit})
        for session_id in gaps:
            items = sorted([*found[session_id], *filled.get(session_id, [])], key=seq_of)
            if gaps_after(afters[session_id], [i["seq"] for i in items]):
                del found[session_id]  # a hole the change log cannot fill: read it all back
            else:
                found[session_id] = items
        return found

    def store(self, snapshots: Sequence[SpanSnapshot]) -> None:
        """Store ``snapshots`` outside a flush (a run's spans that no flusher got to: the
        pipeline's ``settle``), as the span store's other batch writers do: announced once
        committed, so the flusher publishes them from memory when it comes to it; a run
        whose model calls' totals grew gets a change after them (announced: it is read
        back). Give it a writer of its own: the flusher's may be in use meanwhile."""
        with writes_first():
            versions = self._versions(snapshots)
            writes, _ = self._store(versions, announce=True)
            used = _runs_used(versions, writes)
            first: dict[str, int] = {}
            for (session_id, _), seq in (run_usage_changed(runs=used) if used else {}).items():
                first[session_id] = min(seq, first.get(session_id, seq))
            for session_id, seq in first.items():
                announce_on_commit(session_id, seq)

    def published(self, batch: Batch) -> None:
        """Record that ``batch`` reached the channel layer."""
        last = batch.items[-1]["seq"]
        with self._lock:
            mark = self._marks.pop(batch.session_id, 0)
            if len(self._marks) >= MAX_REMEMBERED:
                forgotten = next(iter(self._marks))  # the least recently published
                self._marks.pop(forgotten)
                self._behind.discard(forgotten)
            self._marks[batch.session_id] = max(mark, last)
            if batch.more:
                self._behind.add(batch.session_id)
            else:
                self._behind.discard(batch.session_id)

    def forget(self) -> None:
        with self._lock:
            self._marks.clear()
            self._behind.clear()
        self._sessions.clear()
        self._runs.clear()

    def _after(self, session_id: str, hint: int | None) -> int:
        found = self._after_known(session_id, hint)
        return max(session_last_seq(session_id=session_id) - 1, 0) if found is None else found

    def _after_known(self, session_id: str, hint: int | None) -> int | None:
        """Where publishing the session starts, as far as memory tells (``None``: read it)."""
        with self._lock:
            mark = self._marks.get(session_id)
            behind = session_id in self._behind
        if behind and mark is not None:
            return mark  # the rest of a long backlog comes first, then what is new
        if hint is not None:
            # Changes between the mark and the hint were written (and published) elsewhere;
            # a client that lacks them fills the gap from the database.
            return hint - 1 if mark is None else max(mark, hint - 1)
        return mark

    def learn(self, *, session_id: str, invocation_id: str, run_id: int) -> None:
        """Remember a stored session and the run of an invocation (a run starting here):
        its spans need no look-up, and can be previewed from their first."""
        self._remember(self._sessions, {session_id})
        if len(self._runs) > MAX_REMEMBERED:
            self._runs.clear()
        self._runs[invocation_id] = run_id

    def known(self, snapshot: SpanSnapshot) -> tuple[str, int | None] | None:
        """The stored session and the run of ``snapshot`` as far as this writer has looked
        them up (``None``: its session is not known yet), without asking the database."""
        session = next((s for s in snapshot.sessions if s in self._sessions), None)
        if session is None:
            return None
        runs = self._runs
        return session, next((runs[i] for i in snapshot.invocations if i in runs), None)

    def _versions(self, snapshots: Sequence[SpanSnapshot]) -> list[SpanVersion]:
        """Snapshots as span versions, each with the nearest stored session (spans of no
        stored session are not ours to keep) and the run of the nearest known invocation."""
        if not snapshots:
            return []
        unknown = {s for snap in snapshots for s in snap.sessions} - self._sessions
        if unknown:
            found = AgentSession.objects.filter(pk__in=unknown).values_list("pk", flat=True)
            self._remember(self._sessions, set(found))
        invocations = {i for snap in snapshots for i in snap.invocations} - set(self._runs)
        if invocations:
            runs = Run.objects.filter(invocation_id__in=invocations)
            if len(self._runs) > MAX_REMEMBERED:
                self._runs.clear()
            self._runs.update(runs.values_list("invocation_id", "pk"))
        versions = []
        for snap in snapshots:
            session = next((s for s in snap.sessions if s in self._sessions), None)
            if session is None:
                continue
            run = next((self._runs[i] for i in snap.invocations if i in self._runs), None)
            versions.append(snap.version(session_id=session, run_id=run))
        return versions

    def _store(
        self, versions: list[SpanVersion], *, announce: bool = False
    ) -> tuple[list[SpanWrite], bool]:
        """Store ``versions``: one write per version and whether each was stored as given
        (when not, some may have been stored reduced, or dropped). ``announce``: the changes
        announce themselves (a flush publishes what it stores itself)."""
        # ``spans_store`` coalesces versions of one span: the pipeline already did (one entry
        # per span in its buffer), so its answers line up with ``versions``.
        if not versions:
            return [], True
        try:
            return spans_store(versions=versions, announce=announce), True
        except Exception as exc:
            if caused_by_outage(exc):
                raise  # nothing stored: the pipeline keeps the batch and tries again later
            if isinstance(exc, IntegrityError):
                # A session or run vanished since it was looked up: look them up afresh.
                self._sessions.clear()
                self._runs.clear()
            # One bad version must not hold up the others (of every session): store them
            # apart; what cannot be stored is stored reduced, or dropped (a session that is
            # gone has nothing left to show its spans in).
            return spans_store_isolating(versions=versions, announce=announce), False

    @staticmethod
    def _remember(known: set[str], found: set[str]) -> None:
        if len(known) + len(found) > MAX_REMEMBERED:
            known.clear()
        known.update(found)


def _runs_used(
    versions: Sequence[SpanVersion], writes: Sequence[SpanWrite]
) -> set[tuple[str, int]]:
    """The runs ``(session id, run id)`` of the stored versions that carry token counts."""
    return {
        (version.session_id, version.run_id)
        for version, write in zip(versions, writes, strict=True)
        if write.seq is not None
        and version.session_id is not None
        and version.run_id is not None
        and (version.tokens_in is not None or version.tokens_out is not None)
    }
