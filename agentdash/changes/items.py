"""Recorded changes as the change items of the live protocol (docs/PROTOCOL.md).

A change item is ``{"seq", "kind", "data"}``. ``data`` is the changed row's data *now* (an
event never changes; a span's latest version; a run's current status), or ``None`` when the
row is gone. A row whose data says which change is its latest (a run's) is told only there:
its earlier changes carry ``data: None`` and ``superseded: True`` — else a client reading
the log later would see a run's end at its first change, before its spans' ends.

The change log does not know those rows: each app that records changes of a kind
registers, when Django starts, how its rows become item data (:func:`item_kind_register`:
sessions their events, the span store its spans, runs their runs). Model and tool text
reaches clients only as ``html`` rendered safe when stored; other payloads are plain JSON
values that clients must display as text (capped: :func:`payload_capped`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from django.db.models import F, Q, Window
from django.db.models.functions import RowNumber

from agentdash.changes.models import SessionChange
from agentdash.changes.selectors import changes_after

Item = dict[str, Any]
RowKey = tuple[str, str]
"""A change's row: ``(session id, ref)``."""
SeqKey = tuple[str, int]
"""A change: ``(session id, seq)``."""

Loader = Callable[[set[RowKey]], Mapping[RowKey, Item]]
Latest = Callable[[Item], int | None]
T = TypeVar("T")
Trimmer = Callable[[Item], Item]

SESSIONS_PER_QUERY = 200
"""Sessions read in one query by :func:`items_after_many` (SQLite parses a long ``OR``
into a deep tree, and limits its depth)."""

MAX_PAYLOAD_CHARS = 16_384
"""Longest JSON of one payload (a function call's arguments, a function response, a state
delta) sent to clients; a longer one is sent as a cut JSON string (``truncated``) instead."""

TOO_LARGE = {"truncated": True, "json": ""}
"""What stands in for a payload cut from a change too large to send whole."""


class EncodedItem(dict[str, Any]):
    """A change item that carries its JSON text, encoded once by whoever made it from what
    it had already encoded (a span's stored JSON): :func:`item_json` takes the text instead
    of encoding the item again. The text may hold non-ASCII characters (never a surrogate)."""

    def __init__(self, item: Item, text: str) -> None:
        super().__init__(item)
        self.text = text


def item_json(item: Item) -> str:
    """``item``'s JSON text: as it was encoded when it carries it, else encoded now
    (ASCII)."""
    text = getattr(item, "text", None)
    return text if isinstance(text, str) else json.dumps(item)


@dataclass(frozen=True)
class ItemKind:
    """How changes of one kind get their data: ``load`` reads the rows named by a set of
    ``(session id, ref)`` keys in a fixed number of queries and returns the data of those
    it found; ``trim`` cuts the bulky parts of one item's data (a change too large for a
    websocket message), or is ``None`` when there is nothing to cut; ``latest`` reads from
    a row's data the seq of its latest change (``None``: the row's data is told at every
    change)."""

    kind: str
    load: Loader
    trim: Trimmer | None = None
    latest: Latest | None = None


_lock = threading.Lock()
_kinds: dict[str, ItemKind] = {}


def item_kind_register(
    kind: str, *, load: Loader, trim: Trimmer | None = None, latest: Latest | None = None
) -> None:
    """Say how changes of ``kind`` (a ``SessionChange.Kind``) become item data; the owning
    app calls it in its ``AppConfig.ready``. Registering a kind again replaces it.
    ``ValueError`` for a kind the change log does not record."""
    if kind not in SessionChange.Kind.values:
        raise ValueError(f"{kind!r} is not a kind of change ({', '.join(SessionChange.Kind)})")
    with _lock:
        _kinds[kind] = ItemKind(kind=kind, load=load, trim=trim, latest=latest)


def items_of_rows(
    refs: set[RowKey],
    rows: Iterable[T],
    *,
    session_of: Callable[[T], str],
    ref_of: Callable[[T], str],
    item_of: Callable[[T], Item],
) -> dict[RowKey, Item]:
    """For a :data:`Loader`: the data of those ``rows`` that ``refs`` names (a query by
    session and id may match a few rows of other keys), keyed ``(session id, ref)``."""
    found = ((session_of(row), ref_of(row), row) for row in rows)
    return {(s, ref): item_of(row) for s, ref, row in found if (s, ref) in refs}


def item_kinds() -> Mapping[str, ItemKind]:
    """The registered kinds (read-only copy)."""
    with _lock:
        return dict(_kinds)


def items_after(*, session_id: str, after_seq: int, limit: int) -> list[Item]:
    """The session's change items with a seq above ``after_seq``, in seq order (at most
    ``limit``), each with its row's current data. One query, then one per kind, whatever
    ``limit``."""
    changes = changes_after(session_id=session_id, seq=after_seq, limit=limit).values_list(
        "session_id", "seq", "kind", "ref"
    )
    return _with_data(list(changes)).get(session_id, [])


def items_after_many(
    afters: Mapping[str, int], *, limit: int, fresh: Mapping[SeqKey, Item] | None = None
) -> dict[str, list[Item]]:
    """:func:`items_after` for many sessions at once (session → ``after_seq``), in one query
    plus one per kind for every ``SESSIONS_PER_QUERY`` sessions. ``fresh``
    (``(session, seq)`` → data) is what the caller has just stored with those seqs: those
    changes take their data from there instead of reading it back."""
    found: dict[str, list[Item]] = {}
    sessions = list(afters)
    for start in range(0, len(sessions), SESSIONS_PER_QUERY):
        chunk = sessions[start : start + SESSIONS_PER_QUERY]
        wanted = Q()
        for session_id in chunk:
            wanted |= Q(session_id=session_id, seq__gt=afters[session_id])
        # The first ``limit`` changes of each session, in one query (a window per session).
        rank = Window(RowNumber(), partition_by=F("session_id"), order_by=F("seq").asc())
        changes = (
            SessionChange.objects.filter(wanted)
            .annotate(rank=rank)
            .filter(rank__lte=limit)
            .order_by("session_id", "seq")
            .values_list("session_id", "seq", "kind", "ref")
        )
        found.update(_with_data(list(changes), fresh or {}))
    return found


def items_at(wanted: Mapping[str, Collection[int]]) -> dict[str, list[Item]]:
    """The change items of each session at the seqs ``wanted`` names (session → seqs), in
    seq order, each with its row's current data: a query per ``SESSIONS_PER_QUERY``
    sessions, then one per kind. A seq with no change recorded is left out."""
    changes: list[tuple[str, int, str, str]] = []
    sessions = [s for s, seqs in wanted.items() if seqs]
    for start in range(0, len(sessions), SESSIONS_PER_QUERY):
        where = Q()
        for session_id in sessions[start : start + SESSIONS_PER_QUERY]:
            where |= Q(session_id=session_id, seq__in=list(wanted[session_id]))
        found = SessionChange.objects.filter(where).order_by("session_id", "seq")
        changes += found.values_list("session_id", "seq", "kind", "ref")
    return _with_data(changes)


def items_of_changes(
    changes: list[tuple[str, int, str, str]], fresh: Mapping[SeqKey, Item]
) -> dict[str, list[Item]]:
    """Changes ``(session, seq, kind, ref)`` just recorded, as items grouped by session: the
    data of those in ``fresh`` taken from there (the others read), each said superseded
    where its row has a later change (as :func:`items_after_many` says it)."""
    return _with_data(changes, fresh)


@dataclass(frozen=True)
class ChangesRead:
    """An items maker (``announcements.ItemsMaker``) of changes just recorded whose items are
    read when made, the rows as they are then: a publisher with several of them at once
    reads them together (:func:`items_of_changes`, one query per kind) instead of each on its
    own (:func:`changes_read_together`)."""

    changes: tuple[tuple[str, int, str, str], ...]  # (session, seq, kind, ref), one session

    def __call__(self, limit: int) -> list[Item]:
        return changes_read_together([self])[self][:limit]


def changes_read_together(reads: Iterable[ChangesRead]) -> dict[ChangesRead, list[Item]]:
    """The items of each of ``reads``, in its seq order, from one read of them all."""
    reads = list(dict.fromkeys(reads))
    found = items_of_changes([change for read in reads for change in read.changes], {})
    by_seq = {(s, item["seq"]): item for s, items in found.items() for item in items}
    return {
        read: [by_seq[s, seq] for s, seq, _, _ in read.changes if (s, seq) in by_seq]
        for read in reads
    }


def _with_data(
    changes: list[tuple[str, int, str, str]], fresh: Mapping[SeqKey, Item] | None = None
) -> dict[str, list[Item]]:
    """Changes ``(session, seq, kind, ref)`` as items grouped by session, each with the
    current data of its row (one query per kind), or with its ``fresh`` data."""
    fresh = fresh or {}
    refs: dict[str, set[RowKey]] = {}
    for session_id, seq, kind, ref in changes:
        if (session_id, seq) not in fresh:
            refs.setdefault(kind, set()).add((session_id, ref))
    kinds = item_kinds()
    found = {kind: kinds[kind].load(keys) if kind in kinds else {} for kind, keys in refs.items()}
    items: dict[str, list[Item]] = {}
    for session_id, seq, kind, ref in changes:
        data = fresh.get((session_id, seq))
        if data is None:
            data = found.get(kind, {}).get((session_id, ref))
        item: Item = {"seq": seq, "kind": kind, "data": data}
        latest = kinds[kind].latest if kind in kinds else None
        told_at = latest(data) if latest is not None and data is not None else None
        if told_at is not None and seq < told_at:
            item = {"seq": seq, "kind": kind, "data": None, "superseded": True}
        items.setdefault(session_id, []).append(item)
    return items


def item_trimmed(item: Item) -> Item:
    """``item`` with its bulky parts cut by its kind's trimmer (a change too large for one
    websocket message); identity, timing and names stay. Unchanged when its kind has none."""
    data = item.get("data")
    kind = item_kinds().get(item["kind"])
    if not data or kind is None or kind.trim is None:
        return item
    return {**item, "data": kind.trim(dict(data))}


def payload_capped(value: Any) -> Any:
    """``value`` when its JSON is at most ``MAX_PAYLOAD_CHARS`` long, else
    ``{"truncated": true, "json": <its JSON, cut>}``."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= MAX_PAYLOAD_CHARS:
        return value
    return {"truncated": True, "json": text[:MAX_PAYLOAD_CHARS]}
