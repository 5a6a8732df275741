"""Span rows of traces of agents that run elsewhere, as the ingest reads and changes them:
where a trace's spans are, moving a trace to the session it named late, and ADK's legacy
model-call step no longer counting usage its child counts. Only this app writes span rows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping

from agentdash.changes.models import SessionChange
from agentdash.changes.services import seqs_take, session_changes_insert
from agentdash.spans.models import Span
from agentdash.spans.rollups import rollups_count, rows_steps

Pair = tuple[str, str]


def trace_sessions(
    *, trace_ids: Collection[str], owner_id: int, app_name: str, prefix: str
) -> dict[str, str]:
    """Each of ``trace_ids`` with spans stored in a session of ``owner_id`` and ``app_name``
    whose id starts with ``prefix`` → one such session."""
    rows = (
        Span.objects.filter(
            trace_id__in=trace_ids,
            session__owner_id=owner_id,
            session__app_name=app_name,
            session__id__startswith=prefix,
        )
        .values_list("trace_id", "session_id")
        .distinct()
    )
    where: dict[str, str] = {}
    for trace_id, session_id in rows:
        where.setdefault(trace_id, session_id)
    return where


def traces_rehome(*, moves: Mapping[str, Pair]) -> tuple[set[str], set[str]]:
    """Move each trace's spans from the session it was given to the one it names now
    (``moves[trace_id] = (from_session, to_session)``), each span with its target's next seq
    and recorded as its change; call it in a transaction. Returns the traces moved and the
    sessions they left empty."""
    if not moves:
        return set(), set()
    sources = {source: trace_id for trace_id, (source, _) in moves.items()}
    rows = list(
        Span.objects.select_for_update()
        .filter(session_id__in=sources.keys())
        .values_list("pk", "trace_id", "span_id", "session_id")
    )
    rows = [row for row in rows if sources[row[3]] == row[1]]
    if not rows:
        return set(), set()
    counts = Counter(moves[trace_id][1] for _, trace_id, _, _ in rows)
    next_seq = seqs_take(counts)
    changes = []
    by_pk: dict[int, tuple[str, int]] = {}
    for pk, trace_id, span_id, _ in rows:
        target = moves[trace_id][1]
        seq = next_seq[target]
        next_seq[target] = seq + 1
        by_pk[pk] = (target, seq)
        changes.append((target, seq, f"{trace_id}:{span_id}"))
    updated = []
    for span in Span.objects.filter(pk__in=by_pk).only("pk", "session_id", "seq"):
        span.session_id, span.seq = by_pk[span.pk]
        updated.append(span)
    Span.objects.bulk_update(updated, ["session_id", "seq"])
    session_changes_insert(kind=SessionChange.Kind.SPAN, changes=changes)
    left = Span.objects.filter(session_id__in=sources.keys()).values_list("session_id", flat=True)
    return {trace_id for _, trace_id, _, _ in rows}, set(sources) - set(left)


def children_named(*, parents: Collection[Pair], prefix: str) -> set[Pair]:
    """Which of ``parents`` (trace id, span id) have a stored child whose name starts with
    ``prefix``."""
    if not parents:
        return set()
    rows = Span.objects.filter(
        trace_id__in={t for t, _ in parents},
        parent_span_id__in={s for _, s in parents},
        name__startswith=prefix,
    ).values_list("trace_id", "parent_span_id")
    return set(rows) & set(parents)


def usage_uncount(*, spans: Collection[Pair], name: str) -> None:
    """The stored spans ``spans`` (trace id, span id) named ``name`` stop counting usage."""
    if spans:
        rows = Span.objects.filter(
            trace_id__in={t for t, _ in spans}, span_id__in={s for _, s in spans}, name=name
        )
        counted = rows_steps(rows)
        rows.update(usage_model="", tokens_in=None, tokens_out=None, tokens_cached=None,
                    tokens_thinking=None)  # fmt: skip
        rollups_count(counted, sign=-1)  # and as they count now:
        rollups_count(s._replace(name="", tokens=(0, 0, 0, 0)) if s.kind != "tool" else s
                      for s in counted)  # fmt: skip
