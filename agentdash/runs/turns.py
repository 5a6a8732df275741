"""A session's runs take turns: one at a time, in order.

A message sent while a run of its session is under way (running, or waiting for an
approval) is queued, not run beside it: two runs of one session would write one history
at once, and their answers would interleave. Queued runs start in order, except that an
answer to an approval request goes before the messages queued behind the paused run (it
finishes what that run started). Whoever may cancel can still interrupt: cancelling the
run under way (or a waiting one) lets the next one start.

The executor may be handed any queued run at any time (a dispatch, the reaper's
resubmission): :func:`turn_taken` is asked in the claim, under the session's row lock,
and a run whose turn it is not stays queued. When a run ends, the next one is dispatched
(``services.turn_next``).
"""

from __future__ import annotations

from typing import Any

from agentdash.core.prepared import PreparedQuery
from agentdash.runs.models import Run

HOLDERS = (Run.Status.RUNNING, Run.Status.WAITING)


_QUEUED: PreparedQuery[tuple[int, Any, bool]] = PreparedQuery(
    lambda session_id: Run.objects.filter(
        session_id=session_id, status=Run.Status.QUEUED
    ).values_list("pk", "message", "cancel_requested")
)
_UNDER_WAY_OR_QUEUED: PreparedQuery[tuple[int, str, Any, bool]] = PreparedQuery(
    lambda session_id: Run.objects.filter(
        session_id=session_id, status__in=(*HOLDERS, Run.Status.QUEUED)
    ).values_list("pk", "status", "message", "cancel_requested")
)


def is_answer(message: Any) -> bool:
    """Whether a run's message answers a request (a function response: an approval)."""
    parts = message.get("parts") if isinstance(message, dict) else None
    return any(isinstance(p, dict) and p.get("function_response") for p in parts or [])


def queue_order(run_id: int, message: Any) -> tuple[bool, int]:
    """Where a queued run stands: answers first, then by when it was made."""
    return (not is_answer(message), run_id)


def turn_first(session_id: str) -> int | None:
    """The queued run of the session whose turn is next (one asked to stop goes first: its
    claim only ends it), or ``None``."""
    return _first(_QUEUED.rows(session_id))


def _first(queued: list[tuple[int, Any, bool]]) -> int | None:
    if not queued:
        return None
    stopping = [pk for pk, _, cancel in queued if cancel]
    if stopping:
        return min(stopping)
    return min(queued, key=lambda row: queue_order(row[0], row[1]))[0]


def turn_taken(*, session_id: str, run_id: int) -> bool:
    """Whether run ``run_id`` (queued) must wait: another run of the session is running or
    waiting, or a queued one goes before it. One query: the session's runs under way or
    queued."""
    found: list[tuple[int, str, Any, bool]] = _UNDER_WAY_OR_QUEUED.rows(session_id)
    if any(status in HOLDERS for pk, status, _, _ in found if pk != run_id):
        return True
    first = _first([(pk, message, cancel) for pk, status, message, cancel in found
                    if status == Run.Status.QUEUED])  # fmt: skip
    return first is not None and first != run_id
