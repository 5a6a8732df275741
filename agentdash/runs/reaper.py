"""The reaper: no run is left running forever, and no queued run is forgotten.

Every process that starts a run host runs :func:`reap_forever` on its run loop — Celery
workers, and daphne too, whose reaper hands runs to the broker for whichever worker comes
back, so runs are taken up again even when every worker died. Passes in several processes
at once are harmless: each transition is a conditional update that only one of them wins.

With the default timings a run whose worker was killed is queued again 8–12 s after the
kill: its last heartbeat is at most ``RUN_HEARTBEAT_S`` (2 s) old then, it is stale after
``RUN_STALE_AFTER_S`` (10 s) and the next pass comes within ``REAPER_INTERVAL_S`` (2 s).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from agentdash.changes.services import seqs_hold
from agentdash.core.conf import agentdash_setting
from agentdash.core.threads import in_worker_thread
from agentdash.runs.confirmations import confirmations_expire
from agentdash.runs.lifecycle import run_cancel_message, run_change_record, run_report
from agentdash.runs.models import Run
from agentdash.runs.replays import replays_resume_stalled
from agentdash.runs.services import run_dispatch
from agentdash.spans.models import Span
from agentdash.spans.services import spans_store
from agentdash.spans.span_version import SpanVersion

logger = logging.getLogger(__name__)

WORKER_DIED = "run's worker died"


@dataclass
class ReapReport:
    """What one pass did: run ids re-queued, failed and submitted again, spans closed, and
    the sessions whose change log grew."""

    requeued: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    resubmitted: list[int] = field(default_factory=list)
    replays_resumed: list[int] = field(default_factory=list)
    spans_closed: int = 0
    session_ids: set[str] = field(default_factory=set)


def _submit(run_id: int) -> None:
    run_dispatch(run_id=run_id)


REAP_HOOKS: list[Callable[..., object]] = []


def reap_hook_add(hook: Callable[..., object]) -> None:
    """Have every reaping pass that looks at running work also call ``hook(stale_after_s=…,
    max_attempts=…)`` — work of a higher layer (eval runs) kept alive by heartbeats the same
    way. Registered from that layer's ``AppConfig.ready``; a hook is added once."""
    if hook not in REAP_HOOKS:
        REAP_HOOKS.append(hook)


def runs_reap(
    *,
    stale_after_s: float,
    max_attempts: int,
    requeue_after_s: float | None = None,
    submit: Callable[[int], None] | None = None,
    running: bool = True,
) -> ReapReport:
    """One pass (``running=False``: of the queued runs only).

    A ``running`` run whose heartbeat is older than ``stale_after_s`` has lost its worker: its
    still-open spans (of the run or of its trace) are closed as errored ("run's worker died"),
    and it goes back to ``queued`` and to the executor when it has had fewer than
    ``max_attempts`` attempts, else it ends ``failed`` ("worker stopped: no heartbeat since
    …") and the chat is told. A ``queued`` run handed to the executor more than
    ``requeue_after_s`` ago is handed to it again (a duplicate is harmless: runs are
    claimed). A replay whose last run ended without its next message being queued (its
    process died) is advanced (``replays.replays_resume_stalled``). Each status change
    records a seq (announced to the live pipeline on commit).
    ``submit`` defaults to handing the run to this process's executor (``run_dispatch``: a
    failure to submit is logged, not raised, and the run, still queued, is submitted again
    by a pass ``requeue_after_s`` later).
    """
    submit = submit or _submit
    now = timezone.now()
    report = ReapReport()
    cutoff = now - timedelta(seconds=stale_after_s)
    stale = Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, started_at__lt=cutoff)
    found = Run.objects.select_related("session").filter(stale, status=Run.Status.RUNNING)
    for run in found if running else ():
        _reap_one(run, stale, max_attempts, submit, report)
    if requeue_after_s is not None:
        since = now - timedelta(seconds=requeue_after_s)
        waiting = Q(queued_at__lt=since) | Q(queued_at__isnull=True, created_at__lt=since)
        queued = Run.objects.filter(waiting, status=Run.Status.QUEUED)
        for run_id in queued.values_list("pk", flat=True):
            if queued.filter(pk=run_id).update(queued_at=now):
                report.resubmitted.append(run_id)
                submit(run_id)
    report.replays_resumed = replays_resume_stalled()
    for hook in REAP_HOOKS if running else ():
        hook(stale_after_s=stale_after_s, max_attempts=max_attempts)
    return report


def _reap_one(
    run: Run, stale: Q, max_attempts: int, submit: Callable[[int], None], report: ReapReport
) -> None:
    seen = run.heartbeat_at or run.started_at
    why = f"worker stopped: no heartbeat since {_when(seen)}"
    detail = f"{why} (worker {run.worker or '?'}, attempt {run.attempt} of {max_attempts})"
    mine = Run.objects.filter(stale, pk=run.pk, status=Run.Status.RUNNING, attempt=run.attempt)
    # Asked to stop: not run again (had it been queued, the next claim would cancel it).
    retry = run.attempt < max_attempts and not run.cancel_requested
    with transaction.atomic():
        if retry:
            changed = mine.update(
                status=Run.Status.QUEUED,
                worker="",
                heartbeat_at=None,
                queued_at=timezone.now(),
                error=f"{detail}; queued again",
            )
        elif run.cancel_requested:
            changed = mine.update(
                status=Run.Status.CANCELLED,
                finished_at=timezone.now(),
                error=f"{run_cancel_message(run.cancel_reason)} ({detail})",
            )
        else:
            changed = mine.update(
                status=Run.Status.FAILED, finished_at=timezone.now(), error=detail
            )
        if not changed:
            return  # it came back to life, or another reaper was first
        report.spans_closed += _spans_close(run, f"{WORKER_DIED}: {why}")
        run_change_record(run=run)
        if retry:
            transaction.on_commit(lambda: submit(run.pk))
    report.session_ids.add(run.session_id)
    if run.cancel_requested and not retry:
        logger.warning("run %s (cancelled, as asked): %s", run.pk, detail)
        return
    (report.requeued if retry else report.failed).append(run.pk)
    logger.warning("run %s (%s): %s", run.pk, "queued again" if retry else "failed", detail)
    if not retry:
        run_report(run=run, code="WORKER_LOST", message=f"The run failed: {detail}.")


def _spans_close(run: Run, message: str) -> int:
    """End the run's open spans (this attempt's trace, or tagged with the run) as errored,
    in one batch; the counters of every session involved are held first (in one order)."""
    where = Q(run_id=run.pk)
    if run.trace_id:
        where |= Q(trace_id=run.trace_id)
    end = time.time_ns()
    versions = [
        SpanVersion(
            trace_id=span.trace_id,
            span_id=span.span_id,
            name=span.name,
            start_time=span.start_time,
            end_time=max(end, span.start_time),
            parent_span_id=span.parent_span_id,
            kind=span.kind,
            status=Span.Status.ERROR,
            status_message=message,
            attributes=span.attributes,
            events=span.events,
            session_id=span.session_id,
            run_id=span.run_id or run.pk,
        )
        for span in Span.objects.filter(where, end_time__isnull=True)
    ]
    seqs_hold({run.session_id, *(v.session_id for v in versions if v.session_id)})
    return sum(write.stored for write in spans_store(versions=versions))


def _when(moment: datetime | None) -> str:
    return moment.isoformat(timespec="seconds") if moment else "it started"


async def reap_forever() -> None:
    """Reap every ``REAPER_INTERVAL_S`` with the configured limits, until cancelled (the run
    host runs it: ``RunsConfig.ready`` registers it).

    For ``RUN_STALE_AFTER_S`` after it starts, and after a pass fails (the database
    unreachable, most likely), running runs are left alone: their workers may have been
    unable to write heartbeats (an outage, which may also be why this process was started),
    and must have the time to do so before their runs look dead. Queued runs are still
    submitted. A run orphaned after the start is not delayed by it: it looks dead only
    ``RUN_STALE_AFTER_S`` after its last heartbeat anyway. With ``CONFIRMATION_TIMEOUT_S``
    set, each pass also denies the tool confirmations left unanswered that long."""
    reap = in_worker_thread(runs_reap)
    expire = in_worker_thread(confirmations_expire)
    loop = asyncio.get_running_loop()
    blind_until = loop.time() + float(agentdash_setting("RUN_STALE_AFTER_S"))
    while True:
        stale_after_s = float(agentdash_setting("RUN_STALE_AFTER_S"))
        try:
            await reap(
                stale_after_s=stale_after_s,
                max_attempts=int(agentdash_setting("RUN_MAX_ATTEMPTS")),
                requeue_after_s=float(agentdash_setting("RUN_REQUEUE_AFTER_S")),
                running=loop.time() >= blind_until,
            )
        except Exception:
            logger.exception("reaping runs failed; trying again at the next tick")
            blind_until = loop.time() + stale_after_s
        timeout_s = float(agentdash_setting("CONFIRMATION_TIMEOUT_S"))
        if timeout_s > 0:
            try:
                await expire(timeout_s=timeout_s)
            except Exception:
                logger.exception("denying unanswered confirmations failed; trying again")
        await asyncio.sleep(float(agentdash_setting("REAPER_INTERVAL_S")))
