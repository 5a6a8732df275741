"""What a flush was told rather than read: the change items announced with their writes
(``changes.announcements``), made once for the flush, and those announced after it took its
work that fill a gap among its own seqs. Used by ``flush_writer``, on the flusher's thread
(or on the loop, for changes whose items are made already: ``FlushWriter.told``)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

from agentdash.changes.announcements import ItemsMaker
from agentdash.changes.items import ChangesRead, Item, SeqKey, changes_read_together

Late = Callable[[Collection[str]], Mapping[str, Sequence[ItemsMaker]]]
"""What has been announced, with its items, for each of the sessions given, since the flush
took its work (the pipeline's, read under its lock)."""


def announced_items(
    announced: Mapping[str, Sequence[ItemsMaker]],
    regrown: Mapping[tuple[str, int], int],
    limit: int,
) -> tuple[dict[SeqKey, Item], dict[str, list[Item]], set[str]]:
    """The change items announced with this flush, made (at most ``limit`` per session),
    and those of the runs whose totals grew (``regrown``: ``(session, run)`` → the seq of
    its change): by (session, seq) — what was just stored need not be read back —, as
    change items by session, and the sessions whose page of announced items is full
    (more may have been announced: they are read back)."""
    fresh: dict[SeqKey, Item] = {}
    ours: dict[str, list[Item]] = {}
    full: set[str] = set()
    grown: dict[str, list[tuple[str, int, str, str]]] = {}
    for (session_id, run_id), seq in sorted(regrown.items(), key=lambda pair: pair[1]):
        grown.setdefault(session_id, []).append((session_id, seq, "run", str(run_id)))
    grown_reads = {s: ChangesRead(tuple(changes)) for s, changes in grown.items()}
    # The makers that read their rows (a run's status changes, a run's new totals) read
    # together, once: one query for the runs, one for their totals.
    reads = [m for makers in announced.values() for m in makers if isinstance(m, ChangesRead)]
    reads += grown_reads.values()
    read = changes_read_together(reads) if reads else {}
    for session_id in dict.fromkeys([*announced, *grown_reads]):
        made: list[Item] = []
        for make in announced.get(session_id, ()):  # in seq order: what is past the
            left = limit - len(made)  # bound goes out later, read
            if left <= 0:
                break
            known = read.get(make) if isinstance(make, ChangesRead) else None
            made += known[:left] if known is not None else make(left)
        if len(made) >= limit:
            full.add(session_id)
        if session_id in grown_reads:
            made += read[grown_reads[session_id]]
        for item in made:
            fresh[(session_id, item["seq"])] = item["data"]
        if made:
            ours[session_id] = made
    return fresh, ours, full


def late_filled(
    found: dict[str, list[Item]],
    gaps: dict[str, list[int]],
    afters: Mapping[str, int],
    late: Late | None,
    limit: int,
) -> None:
    """Fill ``gaps`` (session → missing seqs) in ``found`` from the announcements made
    since the flush began, as far as they carry their items in memory (a maker that
    reads its rows is left to the read of the gaps): what is filled leaves ``gaps``. The
    next flush takes those announcements too, and drops what went out with this one.

    Each maker makes as many items as there are seqs missing, at most ``limit``: a late
    write fills a gap from its first seq on (its seqs follow one another), and a big one
    (an export's thousand spans) is not made whole to fill one hole — what it leaves is
    read."""
    if not gaps or late is None:
        return
    for session_id, makers in late(list(gaps)).items():
        missing = set(gaps.get(session_id, ()))
        wanted = min(len(missing), limit)
        made = [
            item
            for make in makers
            if not isinstance(make, ChangesRead)
            for item in make(wanted)
            if item["seq"] in missing
        ]
        if not made:
            continue
        items = sorted([*found[session_id], *made], key=seq_of)
        found[session_id] = items
        left = gaps_after(afters[session_id], [i["seq"] for i in items])
        if left:
            gaps[session_id] = left
        else:
            del gaps[session_id]


def seq_of(item: Item) -> int:
    return int(item["seq"])


def gaps_after(after: int, seqs: list[int]) -> list[int]:
    """The seqs missing between ``after`` and the last of ``seqs`` (ascending)."""
    if seqs == list(range(after + 1, after + 1 + len(seqs))):
        return []
    return sorted(set(range(after + 1, seqs[-1] + 1)) - set(seqs))
