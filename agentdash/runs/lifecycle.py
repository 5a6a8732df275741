"""The worker's side of a run's life: claim, heartbeat, its trace, its outcome, and what the
chat is told.

Every visible change of a run (queued, running, its trace, an outcome) records the session's
next change seq (kind ``run``, ref the run's id) in the same transaction, so a client catches
up on it from the database. Transitions of a running run are conditional on its status *and*
attempt: a worker that lost its run (the reaper gave it to another) can no longer write it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

from django.db import IntegrityError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from agentdash.agent_sessions.locks import session_lock
from agentdash.agent_sessions.session_service import DjangoSessionService
from agentdash.changes.announcements import ItemsMade, ItemsMaker, announce_on_commit
from agentdash.changes.items import ChangesRead
from agentdash.changes.models import SessionChange
from agentdash.changes.services import session_change_next, session_changes_next
from agentdash.core.hygiene import text_storable
from agentdash.core.prepared import PreparedQuery, PreparedUpdate
from agentdash.runs.change_items import run_item
from agentdash.runs.models import Run
from agentdash.runs.turns import turn_taken
from agentdash.spans.totals import runs_usage
from runtime.events.event import Event
from runtime.sessions.base_session_service import GetSessionConfig
from runtime.sessions.session import Session

CANCELLABLE = (Run.Status.QUEUED, Run.Status.RUNNING)
FINISHED = (Run.Status.SUCCEEDED, Run.Status.FAILED, Run.Status.CANCELLED)
ERROR_MESSAGE_LIMIT = 4000


class Heartbeat(NamedTuple):
    """What a heartbeat found: ``alive`` False when the run is no longer this attempt's."""

    alive: bool
    cancel_requested: bool
    cancel_reason: str


RunEnded = Callable[[Run], None]
_ended_listeners: list[RunEnded] = []


def run_ended_register(listener: RunEnded) -> None:
    """Have ``listener(run)`` called once a change that ended a run (``FINISHED``) commits,
    in the thread that committed it; what it raises is logged, never the writer's. The
    replays (``runs.replays``) register here from ``RunsConfig.ready``: they queue runs,
    which this module must not import."""
    if listener not in _ended_listeners:
        _ended_listeners.append(listener)


def run_change_record(*, run: Run, no_calls: bool = False, as_stored: bool = False) -> int:
    """Record a change of ``run`` in its session's change log; returns the seq. A run it
    records as ended is handed to the :func:`run_ended_register` listeners on commit.

    ``no_calls``: the run cannot have made a model call yet (it was just queued, or its
    first attempt just claimed) — ``run`` as it is now is then its whole item, and the
    publisher reads nothing back. ``as_stored``: ``run`` is its row as this transaction
    holds it (locked, every field its item shows up to date) — its item is made now with
    its totals, read after its seq: a flush that stored model calls of the run before it
    has committed by then (it took its seqs first), one after it records a change of its
    own."""
    seq = session_change_next(
        session_id=run.session_id, kind=SessionChange.Kind.RUN, ref=str(run.pk), announce=False
    )
    run.change_seq = max(run.change_seq or 0, seq)
    change = (run.session_id, seq, SessionChange.Kind.RUN.value, str(run.pk))
    items: ItemsMaker
    if no_calls or as_stored:  # made now: the worker goes on changing ``run``
        usage = None if no_calls else runs_usage(session_ids=[run.session_id], run_ids=[run.pk])
        data = run_item(run, usage.get(run.pk) if usage else None)
        items = ItemsMade([{"seq": seq, "kind": change[2], "data": data}])
    else:
        # The publisher reads this run (with the other runs announced to the same flush)
        # with its totals, not the session's changes since it last published.
        items = ChangesRead((change,))
    announce_on_commit(run.session_id, seq, items=items)
    # Kept once the change commits, in a statement of its own: inside the writer's
    # transaction the run's row would be locked after the session's counter, which others
    # take the other way round (a deadlock, found under an outage test). Until then a
    # reader tells the run at its previous latest change too: as before this was kept.
    # SQLite takes no row locks (one writer holds the whole database): kept at once there,
    # which spares a write transaction of its own.
    if connection.vendor == "sqlite":
        _change_seq_keep(run.pk, seq)
    else:
        transaction.on_commit(partial(_change_seq_keep, run.pk, seq), robust=True)
    if run.status in FINISHED:
        for listener in _ended_listeners:
            transaction.on_commit(partial(listener, run), robust=True)
    return seq


def run_usage_changed(*, runs: set[tuple[str, int]]) -> dict[tuple[str, int], int]:
    """Record a change of each run ``(session id, run id)`` whose model calls' totals grew
    (its spans just stored), unannounced: the live pipeline, which stores those spans, sends
    the runs' new data with them. Returns the seq recorded for each run."""
    ordered = sorted(runs)
    refs = [(session_id, str(run_id)) for session_id, run_id in ordered]
    seqs = session_changes_next(kind=SessionChange.Kind.RUN, refs=refs, announce=False)
    return dict(zip(ordered, seqs, strict=True))


def run_usage_told(*, run: Run) -> None:
    """Record a change of ``run`` as it is now, announced (its item read when published): an
    attempt that lost its run tells its last spans' totals, which its end would have told
    (the live pipeline leaves them to a settling run's end). Nothing when the run is gone
    (its session deleted meanwhile: nobody to tell)."""
    try:
        with transaction.atomic():
            (seq,) = run_usage_changed(runs={(run.session_id, run.pk)}).values()
            announce_on_commit(run.session_id, seq)
    except IntegrityError:  # the change's session is gone (checked at commit)
        if Run.objects.filter(pk=run.pk).exists():
            raise


def _change_seq_keep(run_id: int, seq: int) -> None:
    """Keep ``seq`` as the run's latest change (the greater, should two writers cross): the
    change items of its earlier changes then say they are superseded (``changes.items``).
    Only the changes :func:`run_change_record` makes (its status and the like) are kept:
    a usage change (:func:`run_usage_changed`, made by the live pipeline's flusher, which
    must not wait on a run's row) tells the run's data as it is now, after its latest
    status change, which is all the order promise needs."""
    _CHANGE_SEQ_RAISE.update((seq,), run_id, seq)


_CHANGE_SEQ_RAISE = PreparedUpdate(
    lambda run_id, seq: Run.objects.filter(
        Q(change_seq__isnull=True) | Q(change_seq__lt=seq), pk=run_id
    ),
    fields=("change_seq",),
)
_SESSION_OF: PreparedQuery[str] = PreparedQuery(
    lambda run_id: Run.objects.filter(pk=run_id).values_list("session_id", flat=True)
)
_QUEUED_HELD: PreparedQuery[dict[str, Any]] = PreparedQuery(
    lambda run_id: (
        Run.objects.select_for_update(no_key=True)
        .filter(pk=run_id, status=Run.Status.QUEUED)
        .values("cancel_requested", "cancel_reason")
    )
)
_RUN_WITH_SESSION: PreparedQuery[Run] = PreparedQuery(
    lambda run_id: Run.objects.select_related("session").filter(pk=run_id)
)
_ATTEMPT_HELD: PreparedQuery[dict[str, Any]] = PreparedQuery(
    lambda run_id, attempt: (
        Run.objects.filter(pk=run_id, status=Run.Status.RUNNING, attempt=attempt)
        .select_for_update(no_key=True)
        .values("cancel_requested", "cancel_reason")
    )
)


def run_claim(*, run_id: int, worker: str, trace_id: str = "") -> Run | None:
    """Take a queued run for ``worker``: running, attempt + 1, started and heartbeat now;
    ``trace_id``, when given, is the trace the attempt will run in (chosen before its first
    span: ``runtime.telemetry.trace_ids``), else it is recorded once a span tells it.

    Conditional on the run being queued (its row locked), so of two workers handed the same
    run exactly one gets it; the other (and a delivery of a run that is no longer queued)
    gets ``None`` and must do nothing. A queued run someone asked to stop (its attempt was
    interrupted before it saw the request) is not run again: it ends ``cancelled`` here, and
    ``None`` is returned. A run whose turn it is not (another run of its session is under
    way, or goes first: :mod:`agentdash.runs.turns`) stays queued, and ``None`` is returned;
    it is dispatched again when the run before it ends.
    """
    now = timezone.now()
    session_id = next(iter(_SESSION_OF.rows(run_id)), None)
    if session_id is None:
        return None
    with transaction.atomic():
        # The session's row first: one claim of a session at a time, so two runs of it
        # cannot both find the other still queued and start together.
        session_lock(session_id=session_id)
        queued = Run.objects.filter(pk=run_id, status=Run.Status.QUEUED)
        found = next(iter(_QUEUED_HELD.rows(run_id)), None)  # its row held
        if found is None:
            return None
        if not found["cancel_requested"] and turn_taken(session_id=session_id, run_id=run_id):
            return None
        if found["cancel_requested"]:
            queued.update(
                status=Run.Status.CANCELLED,
                finished_at=now,
                error=run_cancel_message(found["cancel_reason"]),
            )
            run_change_record(run=Run.objects.get(pk=run_id))
            return None
        queued.update(
            status=Run.Status.RUNNING,
            attempt=F("attempt") + 1,
            worker=worker[:128],
            started_at=now,
            heartbeat_at=now,
            finished_at=None,
            trace_id=trace_id,
        )
        claimed = _RUN_WITH_SESSION.rows(run_id)
        if len(claimed) != 1:  # (held since the update above: as ``get`` would say it)
            raise Run.DoesNotExist(f"run {run_id} is gone")
        run = claimed[0]
        run_change_record(run=run, no_calls=run.attempt == 1)
    return run


def _this_attempt(run: Run) -> Any:
    return Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING, attempt=run.attempt)


def run_heartbeat(*, run: Run) -> Heartbeat:
    """Write ``heartbeat_at`` of this attempt of a running run and say whether a cancel was
    asked for. Not a visible change (no seq): only the reaper reads heartbeats."""
    alive = _this_attempt(run).update(heartbeat_at=timezone.now()) == 1
    found = Run.objects.filter(pk=run.pk).values("cancel_requested", "cancel_reason").first()
    if found is None:
        return Heartbeat(alive=False, cancel_requested=False, cancel_reason="")
    return Heartbeat(alive, found["cancel_requested"], found["cancel_reason"])


def run_trace_set(*, run: Run, trace_id: str) -> bool:
    """Record the trace this attempt runs in (with a seq); False if the attempt is over."""
    with transaction.atomic():
        if not _this_attempt(run).exclude(trace_id=trace_id).update(trace_id=trace_id):
            return False
        run.trace_id = trace_id
        run_change_record(run=run)
    return True


def run_finish(
    *,
    run: Run,
    status: str,
    error: str = "",
    trace_id: str | None = None,
    as_stored: bool = False,
) -> bool:
    """End this attempt of a running run as ``status`` (succeeded, failed or cancelled), with
    ``error`` (capped) and a seq; ``trace_id``, when given, is the trace its spans are in
    (``""``: it made none — the trace its claim chose was never used). Returns False,
    writing nothing, when the attempt is no longer the run's (reaped, or finished already).
    ``as_stored``: the caller holds the run's row and ``run`` shows it (its change is then
    told with its item: ``run_change_record``)."""
    if status not in (*FINISHED, Run.Status.WAITING):
        raise ValueError(f"a run finishes as one of {FINISHED} or waiting, not {status!r}")
    fields: dict[str, Any] = {
        "status": status,
        "finished_at": timezone.now(),
        "error": text_storable(error[:ERROR_MESSAGE_LIMIT])[0],  # may quote what a tool said
    }
    if trace_id is not None:
        fields["trace_id"] = trace_id
    with transaction.atomic():
        if not _this_attempt(run).update(**fields):
            return False
        for key, value in fields.items():
            setattr(run, key, value)
        run_change_record(run=run, as_stored=as_stored)
    return True


def run_requeue(*, run: Run, why: str, max_attempts: int, failure_code: str = "") -> str:
    """Give this attempt of a running run back: ``queued`` again (worker and heartbeat
    cleared, ``queued_at`` now, ``error`` says ``why``) when the run has had fewer than
    ``max_attempts`` attempts, else ``failed`` with ``why``; ``cancelled`` instead when a
    stop was asked for meanwhile. A seq either way. With ``failure_code``, a run that fails
    here tells the chat (:func:`run_report`) in the same transaction. Returns the new
    status, or ``""`` (nothing written) when the attempt is no longer the run's."""
    detail = text_storable(f"{why} (attempt {run.attempt} of {max_attempts})")[0]
    now = timezone.now()
    with transaction.atomic():
        mine = _this_attempt(run).select_for_update(no_key=True)
        found = mine.values("cancel_requested", "cancel_reason").first()
        if found is None:
            return ""
        fields: dict[str, Any]
        if found["cancel_requested"]:  # asked to stop meanwhile: stopped, not run again
            error = run_cancel_message(found["cancel_reason"])
            fields = {"status": Run.Status.CANCELLED, "finished_at": now, "error": error}
        elif run.attempt < max_attempts:
            fields = {
                "status": Run.Status.QUEUED,
                "worker": "",
                "heartbeat_at": None,
                "queued_at": now,
                "error": f"{detail}; queued again"[:ERROR_MESSAGE_LIMIT],
            }
        else:
            fields = {
                "status": Run.Status.FAILED,
                "finished_at": now,
                "error": detail[:ERROR_MESSAGE_LIMIT],
            }
        if failure_code and fields["status"] == Run.Status.FAILED:
            run_report(run=run, code=failure_code, message=f"The run failed: {fields['error']}")
        mine.update(**fields)
        for key, value in fields.items():
            setattr(run, key, value)
        run_change_record(run=run)
    return str(fields["status"])


def run_conclude(
    *,
    run: Run,
    status: str,
    error: str = "",
    trace_id: str | None = None,
    report: tuple[str, str] | None = None,
) -> bool:
    """End this attempt as :func:`run_finish` does and, with ``report`` (code, message),
    first tell the chat (:func:`run_report`) — both in one transaction, and only while the
    attempt is still the run's: an attempt reaped while it was still alive writes neither
    (the chat never shows the outcome of an attempt that no longer counts). Returns whether
    it wrote."""
    with transaction.atomic():
        # The run's row first, as the reaper takes it: whoever holds it decides the attempt.
        held = _ATTEMPT_HELD.rows(run.pk, run.attempt)
        if not held:
            return False
        # What others write of a running run (a person asking it to stop), as held now: with
        # the rest, which only this attempt writes, ``run`` is the row.
        run.cancel_requested = held[0]["cancel_requested"]
        run.cancel_reason = held[0]["cancel_reason"]
        if report is not None:
            run_report(run=run, code=report[0], message=report[1])
        return run_finish(run=run, status=status, error=error, trace_id=trace_id, as_stored=True)


def run_report(*, run: Run, code: str, message: str) -> Event:
    """Tell the chat what happened to ``run``: append an event authored by the run's agent
    with ``error_code``/``error_message`` (capped), in the run's invocation. Returns it."""
    event = Event(
        invocation_id=run.invocation_id,
        author=run.agent_name,
        error_code=code,
        error_message=message[:ERROR_MESSAGE_LIMIT],
        turn_complete=True,
    )
    session = run_session(run=run)
    if session is None:  # deleted meanwhile: nobody to tell
        return event
    return DjangoSessionService().append_event(session, event)


def run_session(*, run: Run) -> Session | None:
    """The run's session as the runtime sees it, without its events (enough to append to);
    ``None`` when it was deleted."""
    return DjangoSessionService().get_session(
        app_name=run.session.app_name,
        user_id=run.session.user_id,
        session_id=run.session_id,
        config=GetSessionConfig(num_recent_events=0),
    )


def run_cancel_message(reason: str) -> str:
    """What a cancelled run's ``error`` (and the chat) says."""
    return f"Cancelled: {reason}" if reason.strip() else "Cancelled."
