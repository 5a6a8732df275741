"""Reads of runs."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import Count, Min, OuterRef, QuerySet, Subquery
from django.db.models.expressions import RawSQL

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


# ── reads for the pages (dashboard/) ──────────────────────────────────────────────────────
RUN_STATUSES: tuple[str, ...] = tuple(Run.Status.values)
"""Every status a run can have."""


def session_run(*, session_id: str, run_id: int) -> Run | None:
    """The run of that id if it is one of the session's, else ``None``."""
    return Run.objects.filter(pk=run_id, session_id=session_id).first()


def session_runs(*, session_id: str, run_id: int | None = None) -> dict[int, Run]:
    """The session's runs by id (only ``run_id``'s when given)."""
    runs = Run.objects.filter(session_id=session_id)
    if run_id is not None:
        runs = runs.filter(pk=run_id)
    return {run.pk: run for run in runs}


def session_runs_first(*, session_id: str, limit: int) -> list[Run]:
    """The session's first ``limit`` runs, oldest first."""
    return list(Run.objects.filter(session_id=session_id).order_by("created_at", "id")[:limit])


def session_runs_batched(*, session_id: str, batch: int) -> Iterator[list[Run]]:
    """Every run of the session with who asked for it, oldest first, ``batch`` at a time."""
    after = 0
    while True:
        found = list(
            Run.objects.filter(session_id=session_id, id__gt=after)
            .select_related("requested_by")
            .order_by("id")[:batch]
        )
        if not found:
            return
        after = found[-1].id
        yield found
        if len(found) < batch:
            return


def session_run_counts(*, session_id: str) -> tuple[int, int]:
    """How many runs the session has, and how many of them are queued or running."""
    runs = Run.objects.filter(session_id=session_id)
    return runs.count(), runs.filter(status__in=ACTIVE).count()


def latest_run_status_of_outer_session() -> Subquery:
    """For annotating sessions: the status of each one's latest run (``None``: no run)."""
    latest = Run.objects.filter(session_id=OuterRef("pk")).order_by("-created_at", "-id")
    return Subquery(latest.values("status")[:1])


def sessions_with_runs_in(*, statuses: Iterable[str]) -> QuerySet[Run, Any]:
    """The ids (``session_id``) of the sessions with a run in one of ``statuses`` — for a
    ``pk__in`` filter that starts from the few runs in progress (the index on status)."""
    return Run.objects.filter(status__in=list(statuses)).values("session_id")


def runs_by_status_and_agent() -> list[tuple[str, str, int]]:
    """How many runs are stored, by ``(status, agent)`` (one grouped query: /metrics)."""
    rows = Run.objects.values_list("status", "agent_name").annotate(n=Count("id"))
    return [(str(status), str(agent), int(n)) for status, agent, n in rows.order_by()]


RunRow = tuple[float, str, float | None]
"""A run as the Monitor reads it: when it was created (unix seconds), its status, how long
it took from its start to its end (``None`` while it runs, or if it never ran) — a plain
tuple: a hundred thousand of them are made at once."""

_EPOCH = {
    "sqlite": "ROUND((julianday({t}) - 2440587.5) * 86400.0, 3)",  # a day's float: to the ms
    "postgresql": "EXTRACT(EPOCH FROM {t})::double precision",
}
_SPAN = {
    "sqlite": "ROUND((julianday({b}) - julianday({a})) * 86400.0, 3)",
    "postgresql": "EXTRACT(EPOCH FROM {b} - {a})::double precision",
}
"""Unix seconds of a datetime column, and seconds between two, read by the database (the
rows come back as plain numbers: no datetime made for each)."""


def _column(name: str) -> str:
    quoted = connection.ops.quote_name
    return f"{quoted(Run._meta.db_table)}.{quoted(name)}"


def runs_between(
    *, start: datetime, end: datetime, sessions: QuerySet[Any] | None = None, status: str = ""
) -> list[RunRow]:
    """The runs created in ``[start, end)`` (of the sessions of ``sessions``, of ``status``,
    when given):
    when, how they stand, how long they took — read as plain numbers by one query (the
    ORM's per-row work was most of the time for a hundred thousand runs)."""
    rows = Run.objects.filter(created_at__gte=start, created_at__lt=end)
    if sessions is not None:
        rows = rows.filter(session_id__in=sessions.values("pk"))
    if status:
        rows = rows.filter(status=status)
    vendor = connection.vendor
    created = _EPOCH[vendor].format(t=_column("created_at"))
    took = _SPAN[vendor].format(a=_column("started_at"), b=_column("finished_at"))
    found = (
        rows.annotate(created_s=RawSQL(created, ()), seconds=RawSQL(took, ()))
        .values_list("created_s", "status", "seconds")
        .order_by()
    )
    sql, params = found.query.get_compiler(using=found.db).as_sql()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def sessions_with_runs_created(
    *, start: datetime, end: datetime, status: str = ""
) -> QuerySet[Run, Any]:
    """The ids (``session_id``) of the sessions with a run created in ``[start, end)`` (of
    ``status`` when given): the sessions behind a bucket of the Monitor's charts."""
    runs = Run.objects.filter(created_at__gte=start, created_at__lt=end)
    if status:
        runs = runs.filter(status=status)
    return runs.values("session_id")


def oldest_wait_started(*, sessions: QuerySet[Any] | None = None) -> datetime | None:
    """When the run that has waited longest for a person's answer (of the sessions of
    ``sessions`` when given) began to wait — it stopped at a tool confirmation then —, or
    ``None`` when no run waits."""
    rows = Run.objects.filter(status=Run.Status.WAITING)
    if sessions is not None:
        rows = rows.filter(session_id__in=sessions.values("pk"))
    found: datetime | None = rows.aggregate(since=Min("finished_at"))["since"]
    return found


def run_id_of_invocation(*, session_id: str, invocation_id: str) -> int | None:
    """The id of the session's run of that invocation (the chat names answers by it)."""
    found: int | None = (
        Run.objects.filter(session_id=session_id, invocation_id=invocation_id[:64])
        .values_list("pk", flat=True)
        .first()
    )
    return found
