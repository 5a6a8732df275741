"""Writes of the change log: seqs taken from a session's counter, changes recorded.

A change is recorded in the transaction of the write it describes (the event, span or run
row), so both commit or neither does; once committed it is announced
(:mod:`agentdash.changes.announcements`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from django.db import IntegrityError, connection, transaction
from django.db.models import F, Max
from django.utils import timezone

from agentdash.changes.announcements import ItemsMaker, announce_on_commit
from agentdash.changes.bulk import rows_insert
from agentdash.changes.models import SessionChange, SessionSeq


class SeqAllocationError(RuntimeError):
    """A change could not be recorded: its seq was taken even after the session's counter
    was brought back in line with its changes."""


def seqs_take(counts: Mapping[str, int]) -> dict[str, int]:
    """Take ``counts[session]`` new change seqs for each session, in one statement; returns
    the first seq of each (the others follow it). The sessions' counters (``SessionSeq``)
    stay locked until the caller's transaction ends — call it inside one, as late as the
    writes allow: other writers of those sessions wait for that commit. Locked in session id
    order, so two writers never wait on each other in a cycle (a writer that needs several
    sessions' counters at different moments takes them all first: :func:`seqs_hold`)."""
    wanted = {session: n for session, n in counts.items() if n > 0}
    tops = _counters_add(wanted)
    return {s: tops[s] - n + 1 for s, n in wanted.items()}


def seqs_hold(session_ids: Iterable[str]) -> None:
    """Lock the sessions' counters (in id order) without taking seqs, until the transaction
    ends: the seqs taken later in it, in any order, then never wait for another writer."""
    _counters_add(dict.fromkeys(session_ids, 0))


def _counters_add(counts: Mapping[str, int]) -> dict[str, int]:
    if not counts:
        return {}
    ordered = sorted(counts.items())
    quote = connection.ops.quote_name
    table = quote(SessionSeq._meta.db_table)
    session, last = quote("session_id"), quote("last_seq")
    values = ", ".join(["(%s, %s)"] * len(ordered))
    sql = (
        f"INSERT INTO {table} ({session}, {last}) VALUES {values} "
        f"ON CONFLICT ({session}) DO UPDATE SET {last} = {table}.{last} + excluded.{last} "
        f"RETURNING {session}, {last}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [x for item in ordered for x in item])
        return {str(s): int(top) for s, top in cursor.fetchall()}


def seqs_give_back(counts: Mapping[str, int]) -> None:
    """Return the last ``counts[session]`` seqs just taken with :func:`seqs_take` in this
    transaction, unused (no one else can have taken any since: the counters are held)."""
    for session_id, n in sorted(counts.items()):
        if n > 0:
            SessionSeq.objects.filter(pk=session_id).update(last_seq=F("last_seq") - n)


def seq_resync(session_id: str) -> None:
    """Bring the session's counter back to its highest recorded change (were changes ever
    written around it)."""
    top = SessionChange.objects.filter(session_id=session_id).aggregate(m=Max("seq"))["m"] or 0
    SessionSeq.objects.update_or_create(pk=session_id, defaults={"last_seq": top})


def session_change_next(
    *, session_id: str, kind: str, ref: str, announce: bool = True, prompt: bool = False
) -> int:
    """Record one change of the session and return its ``seq``: one more than the highest so
    far, so a session's seqs run 1, 2, 3 … without gaps between committed changes.

    The seq comes from the session's counter (:func:`seqs_take`), held until the caller's
    transaction commits, so concurrent writers of one session queue there, on SQLite and on
    PostgreSQL, and never take the same seq. Should the seq still be recorded already
    (changes written around the counter), nothing is inserted, the counter is brought back
    in line and the insert tried once more, then :class:`SeqAllocationError`. No savepoint:
    a taken seq is skipped (``ON CONFLICT DO NOTHING``), never an error that would abort
    the caller's transaction, so it may be called inside one; the seq is only final when
    that commits. On PostgreSQL counter and change are one statement (one round trip).

    With ``announce`` (the default) the change is announced once the transaction commits, so
    connected clients get it within a flush (within the flusher's linger; at once with
    ``prompt``: ``announcements.Announcer``); a rolled-back change announces nothing.
    """
    seq = _change_insert(session_id, kind, ref)
    if seq is None:
        seq_resync(session_id)
        seq = _change_insert(session_id, kind, ref)
        if seq is None:
            raise SeqAllocationError(
                f"could not record a change of session {session_id!r}: its next seq is taken"
            )
    if announce:
        announce_on_commit(session_id, seq, prompt=prompt)
    return seq


def session_changes_next(
    *, kind: str, refs: Sequence[tuple[str, str]], announce: bool = True
) -> list[int]:
    """Record one change of ``kind`` for each ``(session id, ref)``, in that order (a
    session's seqs follow one another), and return their seqs: one transaction of two
    statements whatever their number — the seqs taken for all the sessions at once
    (:func:`seqs_take`), the changes inserted at once — or, should a seq be recorded
    already, one change at a time as :func:`session_change_next` records it."""

    def one_by_one() -> list[int]:
        with transaction.atomic():
            return [
                session_change_next(session_id=s, kind=kind, ref=r, announce=announce)
                for s, r in refs
            ]

    if len(refs) <= 1:  # one statement on PostgreSQL: no batch to gain
        return one_by_one()
    try:
        with transaction.atomic():
            first = seqs_take(Counter(session_id for session_id, _ in refs))
            changes = []
            for session_id, ref in refs:
                changes.append((session_id, first[session_id], ref))
                first[session_id] += 1
            session_changes_insert(kind=kind, changes=changes, announce=announce)
    except IntegrityError:
        return one_by_one()
    return [seq for _, seq, _ in changes]


def _change_insert(session_id: str, kind: str, ref: str) -> int | None:
    """The session's next seq taken and its change inserted; ``None`` when that seq is
    recorded already (the counter moved on regardless: resync it)."""
    quote = connection.ops.quote_name
    counters, changes = (quote(m._meta.db_table) for m in (SessionSeq, SessionChange))
    session, last, seq = quote("session_id"), quote("last_seq"), quote("seq")
    take = (
        f"INSERT INTO {counters} ({session}, {last}) VALUES (%s, 1) ON CONFLICT ({session}) "
        f"DO UPDATE SET {last} = {counters}.{last} + 1 RETURNING {last}"
    )
    columns = f"{session}, {seq}, {quote('kind')}, {quote('ref')}, {quote('at')}"
    at = connection.ops.adapt_datetimefield_value(timezone.now())
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                f"WITH taken AS ({take}) INSERT INTO {changes} ({columns}) "
                f"SELECT %s, {last}, %s, %s, %s FROM taken ON CONFLICT DO NOTHING RETURNING {seq}",
                [session_id, session_id, kind, ref, at],
            )
        else:
            cursor.execute(take, [session_id])
            (top,) = cursor.fetchone()
            cursor.execute(
                f"INSERT INTO {changes} ({columns}) VALUES (%s, %s, %s, %s, %s) "
                f"ON CONFLICT DO NOTHING RETURNING {seq}",
                [session_id, top, kind, ref, at],
            )
        row = cursor.fetchone()
    return None if row is None else int(row[0])


def session_changes_insert(
    *,
    kind: str,
    changes: Sequence[tuple[str, int, str]],
    announce: bool = True,
    items: Mapping[str, ItemsMaker] | None = None,
    prompt: bool = False,
) -> None:
    """Insert changes ``(session id, seq, ref)`` of one ``kind`` whose seqs the caller took
    with :func:`seqs_take` in this transaction, in one statement. A seq already recorded
    raises ``IntegrityError`` (the caller redoes its batch). With ``announce``, each
    session's first new seq is announced once the transaction commits, with ``items[session]``
    when given (it makes the session's change items: ``announcements.ItemsMaker``), and
    ``prompt`` (``announcements.Announcer``)."""
    now = timezone.now()
    kind = str(kind)  # a choice's text (``SessionChange.Kind``) as a plain string: not converted
    rows_insert(  # again for each row
        model=SessionChange,
        fields=("session_id", "seq", "kind", "ref", "at"),
        rows=[(session_id, seq, kind, ref, now) for session_id, seq, ref in changes],
    )
    if announce:
        firsts: dict[str, int] = {}
        for session_id, seq, _ in changes:
            firsts.setdefault(session_id, seq)
        for session_id, seq in firsts.items():
            announce_on_commit(session_id, seq, items=(items or {}).get(session_id), prompt=prompt)
