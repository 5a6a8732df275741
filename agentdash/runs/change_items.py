"""Runs as change items (kind ``run``): registered with the change log by ``RunsConfig``."""

from __future__ import annotations

from agentdash.changes.items import Item, RowKey, items_of_rows
from agentdash.core.prepared import PreparedQuery
from agentdash.runs.models import Run
from agentdash.spans.totals import runs_usage
from agentdash.spans.usage import Totals


def run_item(run: Run, usage: Totals | None = None) -> Item:
    """The ``data`` of a ``run`` change: the run's current status, ``usage``: the totals
    of its model calls (``usage``; none given: no calls), ``queued_text``, and
    ``change_seq``, the seq of its latest change (``None``: not known)."""
    return {
        "id": run.id,
        "status": run.status,
        "agent": run.agent_name,
        "invocation_id": run.invocation_id,
        "attempt": run.attempt,
        "error": run.error,
        "trace_id": run.trace_id,
        "cancel_requested": run.cancel_requested,
        "usage": (usage or Totals()).as_json(),
        "queued_text": _queued_text(run),
        "change_seq": run.change_seq,
    }


def run_latest_change(data: Item) -> int | None:
    """The seq of the latest change of the run whose data this is (``None``: not known)."""
    found = data.get("change_seq")
    return found if isinstance(found, int) else None


def _queued_text(run: Run) -> str:
    """The text of a queued run's message while it has never started (its user event is
    not stored yet: a page loaded meanwhile shows the message from here); else ""."""
    if run.status != Run.Status.QUEUED or run.attempt or run.message_stored:
        return ""
    parts = run.message.get("parts") if isinstance(run.message, dict) else None
    texts = [
        p["text"] for p in parts or [] if isinstance(p, dict) and isinstance(p.get("text"), str)
    ]
    return " ".join(texts)


_RUNS: PreparedQuery[Run] = PreparedQuery(
    lambda session_ids, ids: Run.objects.filter(session_id__in=session_ids, pk__in=ids)
)


def runs_load(refs: set[RowKey]) -> dict[RowKey, Item]:
    """The data of the runs named ``(session id, run id)``, in two queries (the runs, their
    usage)."""
    if not refs:
        return {}
    ids = [int(ref) for _, ref in refs if ref.isdigit()]
    sessions = {s for s, _ in refs}
    rows = _RUNS.rows(sorted(sessions), ids)
    usage = runs_usage(session_ids=sessions, run_ids=ids)
    return items_of_rows(
        refs,
        rows,
        session_of=lambda run: run.session_id,
        ref_of=lambda run: str(run.pk),
        item_of=lambda run: run_item(run, usage.get(run.pk)),
    )
