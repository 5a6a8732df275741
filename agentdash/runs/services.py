"""Writes of the runs app."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction

from agentdash.core.services import audit_record
from agentdash.runs.models import Run

RUN_TARGET = "runs.run"
CANCELLABLE = (Run.Status.QUEUED, Run.Status.RUNNING)


class RunNotCancellable(Exception):
    """The run has already finished: there is nothing left to cancel."""

    def __init__(self, run: Run) -> None:
        self.run = run
        super().__init__(
            f"Run {run.invocation_id} is {run.status}; only queued or running runs can be "
            "cancelled."
        )


def _cancel_snapshot(run: Run) -> dict[str, Any]:
    return {
        "status": run.status,
        "cancel_requested": run.cancel_requested,
        "cancel_reason": run.cancel_reason,
    }


def run_cancel_request(
    *, run: Run, actor: AbstractBaseUser | AnonymousUser | None, reason: str = ""
) -> Run:
    """Ask a queued or running run to stop: sets ``cancel_requested`` and ``cancel_reason``
    (the executor stops it at its next check) and writes one ``run.cancel_request`` audit row,
    in one transaction. Returns the stored run.

    Asking again for a run already asked to stop changes nothing and writes nothing.
    Raises :class:`RunNotCancellable` when the run has finished (even if it finished a moment
    ago: the update is conditional on the status in the database).
    """
    with transaction.atomic():
        current = Run.objects.select_for_update().get(pk=run.pk)
        if current.status in CANCELLABLE and current.cancel_requested:
            return current
        before = _cancel_snapshot(current)
        updated = Run.objects.filter(pk=current.pk, status__in=CANCELLABLE).update(
            cancel_requested=True, cancel_reason=reason
        )
        current.refresh_from_db()
        if not updated:
            raise RunNotCancellable(current)
        audit_record(
            actor=actor,
            action="run.cancel_request",
            target_type=RUN_TARGET,
            target_id=str(current.pk),
            before=before,
            after=_cancel_snapshot(current),
            reason=reason,
        )
    return current
