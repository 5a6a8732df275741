"""The waits of runs for a person (``Wait``): written when a run stops on tool confirmations
(or breakpoints) and when each is answered, expires or is given up with its run; read by the
Monitor as the confirmations of a range and how long they waited.

A wait is written in the transaction that changes its run, so the two never disagree. A run
that was waiting before waits were kept gets its row when it is answered (its wait began
when it stopped: ``finished_at``)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from agentdash.runs.confirmation_requests import ConfirmationRequest
from agentdash.runs.lifecycle import run_conclude
from agentdash.runs.models import Run, Wait
from runtime.debug.breakpoints import BREAKPOINT_KEY

WaitRow = tuple[datetime, datetime | None, str, str]
"""When it was asked, when answered (``None``: still waiting), the outcome, the kind."""


def _kind(request: ConfirmationRequest) -> str:
    asked = request.payload if isinstance(request.payload, dict) else {}
    return Wait.Kind.BREAKPOINT if BREAKPOINT_KEY in asked else Wait.Kind.CONFIRMATION


def run_wait(*, run: Run, requests: Iterable[ConfirmationRequest], trace_id: str) -> bool:
    """End this attempt of ``run`` as ``waiting`` on ``requests`` (its invocation's open
    ones) and keep a wait for each; False, writing nothing, if the attempt is no longer the
    run's."""
    with transaction.atomic():
        if not run_conclude(run=run, status=Run.Status.WAITING, trace_id=trace_id):
            return False
        since = run.finished_at or timezone.now()
        waits = [
            Wait(session_id=run.session_id, run=run, request_id=r.request_id[:200],
                 kind=_kind(r), tool=r.tool[:255], asked_at=since)
            for r in requests
        ]  # fmt: skip
        # A request kept already (a retried attempt asked again) keeps its first wait.
        Wait.objects.bulk_create(waits, ignore_conflicts=True)
    return True


def wait_answered(
    *, run: Run, request: ConfirmationRequest, outcome: str, at: datetime | None = None
) -> None:
    """``request`` of the waiting ``run`` got its answer (``outcome``: the decision, or
    ``expired``). Call in the answer's transaction."""
    at = at or timezone.now()
    found, made = Wait.objects.get_or_create(
        session_id=run.session_id, request_id=request.request_id[:200],
        defaults={"run": run, "kind": _kind(request), "tool": request.tool[:255],
                  "asked_at": run.finished_at or at, "answered_at": at, "outcome": outcome},
    )  # fmt: skip
    if not made and found.answered_at is None:
        Wait.objects.filter(pk=found.pk, answered_at__isnull=True).update(
            answered_at=at, outcome=outcome
        )


def waits_abandoned(*, run_id: int) -> None:
    """The waiting run ``run_id`` was stopped: what it waited for will never be answered."""
    Wait.objects.filter(run_id=run_id, answered_at__isnull=True).update(
        answered_at=timezone.now(), outcome=Wait.Outcome.ABANDONED
    )


def waits_between(
    *, start: datetime, end: datetime, sessions: QuerySet[Any] | None = None, tool: str = ""
) -> list[WaitRow]:
    """The waits asked in ``[start, end)`` (of the sessions of ``sessions``, of ``tool``,
    when given)."""
    rows = Wait.objects.filter(asked_at__gte=start, asked_at__lt=end)
    if sessions is not None:
        rows = rows.filter(session_id__in=sessions.values("pk"))
    if tool:
        rows = rows.filter(tool=tool)
    return list(rows.values_list("asked_at", "answered_at", "outcome", "kind").order_by())


def sessions_with_waits(*, start: datetime, end: datetime, outcome: str) -> QuerySet[Any, Any]:
    """The ids (``session_id``) of the sessions with a wait asked in ``[start, end)`` that
    ended as ``outcome`` (``waiting``: not answered yet; ``""``: any)."""
    rows = Wait.objects.filter(asked_at__gte=start, asked_at__lt=end)
    if outcome:
        rows = rows.filter(outcome="" if outcome == "waiting" else outcome)
    return rows.values("session_id")
