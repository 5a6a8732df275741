"""Reads of runs."""

from __future__ import annotations

from agentdash.changes.items import Item
from agentdash.runs.change_items import run_item
from agentdash.runs.models import Run


def session_runs_latest(*, session_id: str, limit: int) -> tuple[list[Item], bool]:
    """The session's latest ``limit`` runs as the live protocol sends them, oldest first,
    and whether older runs exist."""
    found = list(Run.objects.filter(session_id=session_id).order_by("-id")[: limit + 1])
    return [run_item(run) for run in found[:limit][::-1]], len(found) > limit
