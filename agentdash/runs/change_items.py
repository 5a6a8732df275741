"""Runs as change items (kind ``run``): registered with the change log by ``RunsConfig``."""

from __future__ import annotations

from agentdash.changes.items import Item, RowKey, items_of_rows
from agentdash.runs.models import Run


def run_item(run: Run) -> Item:
    """The ``data`` of a ``run`` change: the run's current status."""
    return {
        "id": run.id,
        "status": run.status,
        "agent": run.agent_name,
        "invocation_id": run.invocation_id,
        "attempt": run.attempt,
        "error": run.error,
        "trace_id": run.trace_id,
        "cancel_requested": run.cancel_requested,
    }


def runs_load(refs: set[RowKey]) -> dict[RowKey, Item]:
    """The data of the runs named ``(session id, run id)``, in one query."""
    if not refs:
        return {}
    ids = [int(ref) for _, ref in refs if ref.isdigit()]
    rows = Run.objects.filter(session_id__in={s for s, _ in refs}, pk__in=ids)
    return items_of_rows(
        refs,
        rows,
        session_of=lambda run: run.session_id,
        ref_of=lambda run: str(run.pk),
        item_of=run_item,
    )
