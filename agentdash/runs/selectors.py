"""Reads of runs."""

from __future__ import annotations

from agentdash.changes.items import Item
from agentdash.runs.change_items import run_item
from agentdash.runs.models import Run
from agentdash.spans.totals import runs_usage
from agentdash.spans.usage import Totals

ACTIVE = (Run.Status.QUEUED, Run.Status.RUNNING)


def session_runs_latest(
    *, session_id: str, limit: int, usage: dict[int, Totals] | None = None
) -> tuple[list[Item], bool]:
    """The session's latest ``limit`` runs as the live protocol sends them, oldest first,
    plus any older one still queued or running (so a run a client was not sent has ended),
    and whether older runs exist that were left out. Their ``usage`` is taken from
    ``usage`` (run id → totals, e.g. from ``spans.totals.session_usage``), else read."""
    runs = Run.objects.filter(session_id=session_id)
    found = list(runs.order_by("-id")[: limit + 1])
    latest = found[:limit]
    older_active = (
        list(runs.filter(status__in=ACTIVE, id__lt=latest[-1].id).order_by("-id"))
        if len(found) > limit
        else []
    )
    runs_sent = (latest + older_active)[::-1]
    if usage is None:
        usage = runs_usage(session_ids=[session_id], run_ids=[run.pk for run in runs_sent])
    return [run_item(run, usage.get(run.pk)) for run in runs_sent], len(found) > limit
