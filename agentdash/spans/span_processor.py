"""The OpenTelemetry side of the live pipeline: a span processor that only takes snapshots.

``on_start`` and ``on_end`` run inside the agent's step, so they do the least possible: note
which session (``gen_ai.conversation.id``) and invocation the span belongs to — inherited
from its parent when the span does not say — and put a snapshot in a buffer keyed by span,
under one lock. Conversion to stored data happens later, in the flusher, off the agent's path.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, NamedTuple

from opentelemetry import context as otel_context
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.sdk.trace import Span as SdkSpan
from opentelemetry.trace import StatusCode

from agentdash.spans.span_version import SpanVersion
from runtime.telemetry.attributes import AgentDash, GenAI

MAX_CANDIDATES = 4
"""How many enclosing sessions (and invocations) a span remembers: an agent run as a tool
has a private session that is not stored, and its spans belong to the caller's session."""

MAX_UNSENT = 100_000
"""Span versions remembered as not sent yet (for previews); past it, the newest are left to
their flush."""

MAX_OPEN_SPANS = 100_000
"""Open spans remembered for their children; past it the oldest are forgotten (a span never
ended, e.g. of an abandoned run, must not keep memory forever)."""

_STATUS = {StatusCode.UNSET: "unset", StatusCode.OK: "ok", StatusCode.ERROR: "error"}


class SpanSnapshot(NamedTuple):  # a tuple: the cheapest thing to build on the agent's path
    """A span as it was at start or end, with the sessions and invocations it may belong to
    (nearest first; the flusher picks the first one that is stored). ``made``, when given
    (an empty list), keeps the last version made of an ended one: the previews and the
    flusher often make the same one (a span that ended before its preview went out), and a
    version is made storable — its attributes checked and encoded — when made. (A span not
    ended yet may still be renamed: each version of it is made anew.)"""

    span: ReadableSpan
    attributes: Mapping[str, Any]
    ended: bool
    sessions: tuple[str, ...]
    invocations: tuple[str, ...]
    made: list[Any] | None = None

    def version(self, *, session_id: str | None, run_id: int | None) -> SpanVersion:
        made = self.made if self.ended else None
        if made:
            owner, known = made  # (one read: another thread may be replacing both)
            if owner == (session_id, run_id):
                return known
        version = self._version(session_id=session_id, run_id=run_id)
        if made is not None:
            made[:] = ((session_id, run_id), version)
        return version

    def _version(self, *, session_id: str | None, run_id: int | None) -> SpanVersion:
        span, context = self.span, self.span.get_span_context()
        assert context is not None  # the SDK's spans always have one
        status = span.status
        return SpanVersion(
            trace_id=format(context.trace_id, "032x"),
            span_id=format(context.span_id, "016x"),
            parent_span_id=format(span.parent.span_id, "016x") if span.parent else "",
            name=span.name,
            kind=span.kind.name.lower(),
            start_time=span.start_time or 0,
            end_time=span.end_time if self.ended else None,
            status=_STATUS.get(status.status_code, "unset") if self.ended else "unset",
            status_message=(status.description or "") if self.ended else "",
            attributes=_json_attributes(self.attributes),
            events=[_event(e) for e in span.events] if self.ended else [],
            session_id=session_id,
            run_id=run_id,
        )


class LiveSpanProcessor(SpanProcessor):
    """Buffers span snapshots for the live pipeline; never blocks, never does I/O.

    Only spans of a session are kept (they carry ``gen_ai.conversation.id`` or descend from
    one that does). A span's later snapshot replaces a waiting earlier one (an ended one is
    never replaced), so the buffer holds at most one entry per span. ``wake`` is called when
    the first snapshot arrives after a ``take`` and again when ``batch_size`` wait. While
    ``enabled`` is false nothing is kept.
    """

    def __init__(
        self,
        *,
        batch_size: int,
        wake: Callable[[], None],
        unsent: Callable[[], None] | None = None,
    ) -> None:
        self.enabled = False
        self.batch_size = batch_size
        self._wake = wake
        self.unsent = unsent  # called when a version comes while none waits to be sent
        self._woken = 0  # wakes sent since the last take: 1 for the first snapshot, 2 when full
        self._lock = threading.Lock()
        self._pending: dict[tuple[int, int], SpanSnapshot] = {}
        self._since = 0.0  # when the oldest snapshot waiting arrived (monotonic seconds)
        self._taken: list[SpanSnapshot] = []  # the last ``take``, until stored or restored
        self._owners: dict[int, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        # The latest version of each span not on its way to clients yet (neither stored by a
        # flush nor previewed), with when its first such version came: oldest first.
        self._unsent: dict[tuple[int, int], tuple[float, SpanSnapshot]] = {}

    def on_start(self, span: SdkSpan, parent_context: otel_context.Context | None = None) -> None:
        if not self.enabled:
            return
        attributes = _attributes_copy(span)
        session = attributes.get(GenAI.CONVERSATION_ID)
        invocation = attributes.get(AgentDash.INVOCATION_ID)
        parent = span.parent
        inherited = self._owners.get(parent.span_id) if parent is not None else None
        sessions: tuple[str, ...] = (str(session),) if session else ()
        invocations: tuple[str, ...] = (str(invocation),) if invocation else ()
        if inherited is not None:
            sessions = _nearest(sessions, inherited[0])
            invocations = _nearest(invocations, inherited[1])
        if not sessions:
            return  # not a step of a session: not ours
        if len(self._owners) >= MAX_OPEN_SPANS:
            with contextlib.suppress(StopIteration, RuntimeError):  # changed by another thread
                self._owners.pop(next(iter(self._owners)), None)
        self._owners[span.context.span_id] = (sessions, invocations)
        self._put(SpanSnapshot(span, attributes, False, sessions, invocations, []))

    def on_end(self, span: ReadableSpan) -> None:
        if not self.enabled:
            return
        context = span.get_span_context()
        assert context is not None  # the SDK's spans always have one
        owner = self._owners.pop(context.span_id, None)
        if owner is None:
            return
        self._put(SpanSnapshot(span, span.attributes or {}, True, owner[0], owner[1], []))

    def pending_count(self) -> int:
        return len(self._pending)

    def waited(self) -> float:
        """Seconds the oldest snapshot waiting has waited (0 when none waits)."""
        with self._lock:
            return time.monotonic() - self._since if self._pending else 0.0

    def waiting_for(self, invocation_id: str) -> bool:
        """Whether a snapshot of a span of the invocation waits to be stored: to be taken,
        or taken by a flush that has not stored it yet."""
        with self._lock:
            waiting = (*self._pending.values(), *self._taken)
            return any(invocation_id in snap.invocations for snap in waiting)

    def take_of(self, invocation_id: str) -> list[SpanSnapshot]:
        """Remove and return the waiting snapshots of the invocation, with those of it a
        flush under way took (they stay taken: that flush still stores or restores them),
        for the caller to store without the flusher."""
        with self._lock:
            keys = [k for k, s in self._pending.items() if invocation_id in s.invocations]
            mine = [self._pending.pop(key) for key in keys]
            for key, snapshot in zip(keys, mine, strict=True):
                self._sent(key, snapshot)
            return [*(s for s in self._taken if invocation_id in s.invocations), *mine]

    def stored(self) -> None:
        """The snapshots of the last ``take`` are stored (and about to be published)."""
        with self._lock:
            for snapshot in self._taken:
                self._sent(_key(snapshot), snapshot)
            self._taken = []

    def unsent_due(self, after: float) -> tuple[list[SpanSnapshot], float | None]:
        """The latest versions of the spans that came ``after`` seconds ago or more and have
        not been sent since (neither stored nor previewed): from now on they count as sent.
        With them, the seconds until the next one is due (``None``: none is waiting)."""
        now = time.monotonic()
        due: list[SpanSnapshot] = []
        with self._lock:
            keys = []
            for key, (since, snapshot) in self._unsent.items():  # oldest first
                if since > now - after:
                    break
                keys.append(key)
                due.append(snapshot)
            for key in keys:
                del self._unsent[key]
            first = next(iter(self._unsent.values()), None)
        return due, None if first is None else max(first[0] + after - now, 0.0)

    def take(self, limit: int, *, first: Collection[str] = ()) -> list[SpanSnapshot]:
        """Remove and return up to ``limit`` waiting snapshots, oldest span first; those of
        the invocations ``first`` (runs waiting to record their outcome) are all taken,
        whatever ``limit``, ahead of the others."""
        with self._lock:
            if len(self._pending) <= limit:
                taken, self._pending = self._pending, {}
            else:
                keys = [k for k, s in self._pending.items() if _of_any(s, first)] if first else []
                chosen = set(keys)
                others = (k for k in self._pending if k not in chosen)  # oldest first
                keys += itertools.islice(others, max(limit - len(keys), 0))
                taken = {key: self._pending.pop(key) for key in keys}
            left = len(self._pending)
            self._woken = 2 if left >= self.batch_size else 1 if left else 0
            self._taken = list(taken.values())
        return list(self._taken)

    def restore(self, snapshots: Iterable[SpanSnapshot]) -> None:
        """Put back snapshots that could not be stored, unless a later one arrived meanwhile.
        The rest of the last ``take`` still counts as taken (a flush may be storing it)."""
        snapshots = list(snapshots)
        with self._lock:
            restored = {id(snapshot) for snapshot in snapshots}
            self._taken = [taken for taken in self._taken if id(taken) not in restored]
            for snapshot in snapshots:
                key = _key(snapshot)
                newer = self._pending.get(key)
                if newer is None or (snapshot.ended and not newer.ended):
                    self._pending[key] = snapshot

    def clear(self) -> None:
        with self._lock:
            self._pending.clear()
            self._taken = []
            self._owners.clear()
            self._unsent.clear()
            self._woken = 0

    def _put(self, snapshot: SpanSnapshot) -> None:
        key = _key(snapshot)
        with self._lock:
            now = time.monotonic()
            if not self._pending:
                self._since = now
            kept = self._pending.get(key)
            if kept is None or not kept.ended:
                self._pending[key] = snapshot
            unsent = self._unsent.get(key)
            first_unsent = not self._unsent
            if unsent is not None:
                if not unsent[1].ended:
                    self._unsent[key] = (unsent[0], snapshot)
            elif len(self._unsent) < MAX_UNSENT:
                self._unsent[key] = (now, snapshot)
            due = 2 if len(self._pending) >= self.batch_size else 1
            wake = due > self._woken
            if wake:
                self._woken = due
        if wake:
            self._wake()
        if first_unsent and self.unsent is not None:
            self.unsent()

    def _sent(self, key: tuple[int, int], snapshot: SpanSnapshot) -> None:
        """``snapshot`` is on its way (call with the lock held): its span is sent unless a
        later version came since."""
        unsent = self._unsent.get(key)
        if unsent is not None and unsent[1] is snapshot:
            del self._unsent[key]

    def shutdown(self) -> None:
        self.enabled = False

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


def _key(snapshot: SpanSnapshot) -> tuple[int, int]:
    context = snapshot.span.get_span_context()
    assert context is not None  # the SDK's spans always have one
    return (context.trace_id, context.span_id)


def _attributes_copy(span: SdkSpan) -> dict[str, Any]:
    # The SDK's BoundedAttributes copies as a plain dict in one call; through the public
    # read-only view every key costs a lock and an ABC method (~3x slower on start).
    bounded = getattr(span, "_attributes", None)
    if bounded is not None and hasattr(bounded, "copy"):
        return dict(bounded.copy())
    return dict(span.attributes or {})


def _of_any(snapshot: SpanSnapshot, invocations: Collection[str]) -> bool:
    return any(i in invocations for i in snapshot.invocations)


def _nearest(own: tuple[str, ...], inherited: tuple[str, ...]) -> tuple[str, ...]:
    if not own:
        return inherited
    return (own[0], *(s for s in inherited if s != own[0]))[:MAX_CANDIDATES]


def _json_attributes(attributes: Mapping[str, Any]) -> dict[str, Any]:
    return {key: list(v) if isinstance(v, tuple) else v for key, v in attributes.items()}


def _event(event: Any) -> dict[str, Any]:
    return {
        "name": event.name,
        "time": event.timestamp,
        "attributes": _json_attributes(event.attributes or {}),
    }
