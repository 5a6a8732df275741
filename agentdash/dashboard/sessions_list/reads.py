"""Reads for the sessions list (the home page): one page of the sessions a user may see,
filtered, newest activity first, each with what the list shows of its runs and spans.

Pages are keyset pages on ``(last_update_time, id)`` — the indexes ``session_recent``,
``session_owner_recent`` and ``session_app_recent`` serve them — so the hundredth page costs
what the first does; the per-session columns are correlated subqueries, computed for the
rows of the page only. A column is one entry of :data:`COLUMNS` (and one cell in
``dashboard/home.html``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from django.db.models import (
    Count,
    Exists,
    Expression,
    F,
    IntegerField,
    Q,
    QuerySet,
    Subquery,
    Value,
)
from django.db.models.functions import Coalesce

from agentdash.agent_sessions.selectors import session_list_for_user
from agentdash.core.permissions import is_operator
from agentdash.dashboard.sessions_list.usage_text import cost_text, tokens_text
from agentdash.remote.selectors import sessions_with_pauses
from agentdash.runs.selectors import (
    ACTIVE,
    RUN_STATUSES,
    latest_run_status_of_outer_session,
    session_run_counts,
    sessions_with_runs_created,
    sessions_with_runs_in,
)
from agentdash.runs.waits import sessions_with_waits
from agentdash.scores.judge import JUDGE_APP
from agentdash.scores.selectors import (
    feedback_of_outer_session,
    score_mean_of_outer_session,
    sessions_scored,
)
from agentdash.spans.selectors import spans_of_outer_session
from agentdash.spans.step_reads import sessions_with_decision, sessions_with_steps
from agentdash.spans.summaries import span_count
from agentdash.spans.totals import sessions_usage
from agentdash.spans.usage import Totals

if TYPE_CHECKING:
    from agentdash.agent_sessions.models import AgentSession

PAGE_SIZE = 50

# What the status filter offers: a latest run's status, any active one, or no run at all.
STATUS_ACTIVE = "active"
STATUS_NONE = "none"
STATUS_FILTERS = (STATUS_ACTIVE, *RUN_STATUSES, STATUS_NONE)
STEP_FILTERS = {
    "model": "a model call",
    "model_error": "a model call that failed",
    "tool": "a tool call",
    "tool_error": "a tool call that failed",
    "decision": "a guardrail decision",
    "wait": "a wait for a person",
}
"""What the Monitor's charts of steps drill down to: sessions with such a step (of the name
``step_name``: a model or tool, a decision, a wait's outcome) started in a window."""


def step_parts(step: str) -> tuple[str, bool]:
    """A step filter (a key of ``STEP_FILTERS``) as its kind and whether it failed:
    ``"tool_error"`` is ``("tool", True)``."""
    kind, _, error = step.partition("_")
    return kind, bool(error)


def _count(rows: QuerySet[Any]) -> Expression:
    """How many of ``rows`` (filtered on ``OuterRef``) there are, 0 for none."""
    counted = rows.order_by().values("session_id").annotate(n=Count("pk")).values("n")[:1]
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


COLUMNS: dict[str, Callable[[], Expression | Subquery]] = {
    "run_status": latest_run_status_of_outer_session,  # None: no run yet
    "span_count": lambda: _count(spans_of_outer_session()),
    "error_count": lambda: _count(spans_of_outer_session(errors_only=True)),
    "feedback_up": lambda: _count(feedback_of_outer_session(up=True)),  # the chat's thumbs
    "feedback_down": lambda: _count(feedback_of_outer_session(up=False)),
}
"""The columns computed per session, by name: each makes the expression annotated on the
page's rows (a row is a dict; the template reads ``row.<name>``)."""

_FIELDS = (
    "id",
    "title",
    "first_message",
    "app_name",
    "user_id",
    "owner_id",
    "owner__username",
    "created_at",
    "last_update_time",
    "event_count",
)


@dataclass(frozen=True)
class Cursor:
    """A place in the list: the last activity and id of a row (the sort key)."""

    last_update_time: float
    id: str

    def __str__(self) -> str:
        return f"{self.last_update_time!r}:{self.id}"

    @classmethod
    def parse(cls, text: str) -> Cursor | None:
        """The cursor ``str()`` wrote, or ``None`` for anything else."""
        when, sep, session_id = text.partition(":")
        try:
            at = float(when)
        except ValueError:
            return None
        if not sep or not session_id or not math.isfinite(at):
            return None
        return cls(at, session_id)


@dataclass(frozen=True)
class SessionListFilters:
    """What the list is narrowed to. ``q`` matches a title or first message (any case) or
    the start of an id; ``owner`` (a username) counts for operators only. ``after`` asks
    the page of rows older than that cursor, ``before`` the page newer than it."""

    q: str = ""
    agent: str = ""
    status: str = ""
    errors: bool = False
    # The LLM judge's own sessions (app ``judge``: an evaluator's, not an agent's) are left
    # out unless asked for, or the Monitor's counts (which include its model calls) are
    # drilled into.
    judges: bool = False
    owner: str = ""
    after: Cursor | None = None
    before: Cursor | None = None
    runs_from: datetime | None = None  # with runs_to: sessions with a run created between
    runs_to: datetime | None = None
    outcome: str = ""  # …of this status (the Monitor's drill-down)
    steps_from: datetime | None = None  # with steps_to and step: sessions with a step
    steps_to: datetime | None = None  # (STEP_FILTERS) that started between…
    step: str = ""
    step_name: str = ""  # …of this model, tool, guardrail decision or wait's outcome
    scored: Q | None = None  # sessions with a score that meets this (scores.score_condition)
    score_name: str = ""  # …of this name: with sort, the list is in order of its mean
    sort: str = ""  # "score" (lowest mean first) or "-score" (highest first); "": activity
    page: int = 1  # a page of a list sorted by score (cursors are by activity)


@dataclass(frozen=True)
class SessionListPage:
    """One page of rows (dicts: the session's fields, ``owner`` (a username or ""),
    ``last_activity`` (an aware datetime), ``cursor`` (its place, as text), ``can_rename``,
    ``can_delete``, every :data:`COLUMNS` entry, and what its model calls used: ``usage``
    (totals, as the session page's snapshot has them), ``usage_tokens`` and ``usage_cost``
    (as the page writes them)), with the cursors of the pages around it (``None``: no such page)."""

    rows: list[dict[str, Any]]
    newer: Cursor | None
    older: Cursor | None
    page: int | None = None  # sorted by score: this page's number…
    more: bool = False  # …and whether there is a next one


def _filtered(user: Any, filters: SessionListFilters) -> QuerySet[AgentSession]:
    sessions = session_list_for_user(user=user)
    if filters.q:
        sessions = sessions.filter(
            Q(title__icontains=filters.q)
            | Q(first_message__icontains=filters.q)
            | Q(id__startswith=filters.q)
        )
    if filters.agent:
        sessions = sessions.filter(app_name=filters.agent)
    elif not (filters.judges or filters.runs_from or filters.steps_from):
        sessions = sessions.exclude(app_name=JUDGE_APP)
    if filters.owner and is_operator(user):
        sessions = sessions.filter(owner__username=filters.owner)
    if filters.errors:
        sessions = sessions.filter(Exists(spans_of_outer_session(errors_only=True).values("pk")))
    if filters.runs_from and filters.runs_to:
        sessions = sessions.filter(
            pk__in=sessions_with_runs_created(
                start=filters.runs_from, end=filters.runs_to, status=filters.outcome
            )
        )
    if filters.steps_from and filters.steps_to and filters.step in STEP_FILTERS:
        sessions = sessions.filter(
            _with_steps(filters.steps_from, filters.steps_to, filters.step, filters.step_name)
        )
    if filters.scored is not None:
        sessions = sessions.filter(pk__in=sessions_scored(condition=filters.scored))
    sessions = sessions.annotate(**{name: make() for name, make in COLUMNS.items()})
    statuses = ACTIVE if filters.status == STATUS_ACTIVE else (filters.status,)
    # Django's type hints cannot see annotations made from a dict (COLUMNS): run_status is one.
    if filters.status == STATUS_NONE:
        sessions = sessions.filter(run_status__isnull=True)  # type: ignore[misc]
    elif set(statuses) <= set(RUN_STATUSES):
        if set(statuses) <= set(ACTIVE):
            # Few runs are in progress at a time: start from them (the index on a run's
            # status), not from every session, when there may be none to find.
            sessions = sessions.filter(pk__in=sessions_with_runs_in(statuses=statuses))
        sessions = sessions.filter(run_status__in=statuses)  # type: ignore[misc]
    return sessions


def _with_steps(start: datetime, end: datetime, step: str, name: str) -> Q:
    """The sessions behind a bucket of one of the Monitor's charts of steps."""
    first, last = start.timestamp(), end.timestamp()
    if step == "decision":
        return Q(pk__in=sessions_with_decision(start_s=first, end_s=last, decision=name))
    if step == "wait":
        return Q(pk__in=sessions_with_waits(start=start, end=end, outcome=name)) | Q(
            pk__in=sessions_with_pauses(start=start, end=end, outcome=name)
        )
    kind, error = step_parts(step)
    return Q(pk__in=sessions_with_steps(start_s=first, end_s=last, kind=kind,
                                       error=error, name=name))  # fmt: skip


def _older_than(cursor: Cursor) -> Q:
    # The plain bound first: it lets the database start its index scan at the cursor.
    at = cursor.last_update_time
    return Q(last_update_time__lte=at) & (
        Q(last_update_time__lt=at) | Q(last_update_time=at, id__lt=cursor.id)
    )


def _newer_than(cursor: Cursor) -> Q:
    at = cursor.last_update_time
    return Q(last_update_time__gte=at) & (
        Q(last_update_time__gt=at) | Q(last_update_time=at, id__gt=cursor.id)
    )


def _cursor(row: dict[str, Any]) -> Cursor:
    return Cursor(row["last_update_time"], row["id"])


def session_list_page(
    *, user: Any, filters: SessionListFilters, limit: int = PAGE_SIZE
) -> SessionListPage:
    """One page of the sessions ``user`` may see (``session_list_for_user``: operators all,
    others their own), narrowed by ``filters``, newest activity first.

    Without a cursor it is the first page. With ``after`` it is the rows older than it;
    with ``before`` the rows newer than it — or the first page, when fewer than ``limit``
    are newer (paging back ends on a full first page)."""
    if filters.sort in SCORE_SORTS and filters.score_name:
        return _by_score(user, filters, limit)
    sessions = _filtered(user, filters).values(*_FIELDS, *COLUMNS)
    newest_first = sessions.order_by("-last_update_time", "-id")
    if filters.before is not None:
        found = list(
            sessions.filter(_newer_than(filters.before)).order_by("last_update_time", "id")[
                : limit + 1
            ]
        )
        if len(found) <= limit:
            first = replace(filters, after=None, before=None)
            return session_list_page(user=user, filters=first, limit=limit)
        rows = found[:limit][::-1]
        return _page(user, rows, newer=_cursor(rows[0]), older=_cursor(rows[-1]))
    if filters.after is not None:
        newest_first = newest_first.filter(_older_than(filters.after))
    found = list(newest_first[: limit + 1])
    rows = found[:limit]
    older = _cursor(rows[-1]) if len(found) > limit else None
    newer = _cursor(rows[0]) if filters.after is not None and rows else None
    return _page(user, rows, newer=newer, older=older)


SCORE_SORTS = ("score", "-score")
SCORE_PAGES_MAX = 200


def _by_score(user: Any, filters: SessionListFilters, limit: int) -> SessionListPage:
    """A page of the list in order of the mean of the score ``filters.score_name`` (lowest
    first, or highest with ``-score``), then newest activity: paged by number."""
    mean = score_mean_of_outer_session(name=filters.score_name)
    sessions = _filtered(user, filters).annotate(score_mean=mean)
    order = F("score_mean").desc(nulls_last=True) if filters.sort == "-score" else F(
        "score_mean").asc(nulls_last=True)  # fmt: skip
    page = max(1, min(filters.page, SCORE_PAGES_MAX))
    ordered = sessions.values(*_FIELDS, *COLUMNS, "score_mean").order_by(
        order, "-last_update_time", "-id")  # fmt: skip
    found = list(ordered[(page - 1) * limit : page * limit + 1])
    shown = _page(user, found[:limit], newer=None, older=None)
    return replace(shown, page=page, more=len(found) > limit)


def _page(
    user: Any, rows: list[dict[str, Any]], *, newer: Cursor | None, older: Cursor | None
) -> SessionListPage:
    operator = is_operator(user)
    used = sessions_usage(session_ids=[row["id"] for row in rows])  # one query for the page
    for row in rows:
        usage = used.get(row["id"], Totals()).as_json()
        row["usage"] = usage
        row["usage_tokens"] = tokens_text(usage)
        row["usage_cost"] = cost_text(usage)
        row["owner"] = row.pop("owner__username") or ""
        row["last_activity"] = datetime.fromtimestamp(row["last_update_time"], tz=UTC)
        row["cursor"] = str(_cursor(row))
        mine = row["owner_id"] is not None and row["owner_id"] == user.pk
        row["can_rename"] = mine
        row["can_delete"] = mine or operator
    return SessionListPage(rows=rows, newer=newer, older=older)


REFRESH_IDS_MAX = 200
"""Rows one refresh reads again (a page shows :data:`PAGE_SIZE`)."""
NEWER_COUNTED_MAX = 100
"""Sessions newer than a page's newest row counted, at most ("100+ more")."""
LIST_START = Cursor(-1.0, "")
"""Before every session: the ``since`` of a page that shows none."""


@dataclass(frozen=True)
class SessionListRefresh:
    """What a list page that shows rows ``ids`` needs to be current: those of them that
    still match its filters, read again (rows as :class:`SessionListPage` has them), and how
    many sessions that match have newer activity than its newest row and are not among them
    (:data:`NEWER_COUNTED_MAX` at most)."""

    rows: list[dict[str, Any]]
    newer: int


def session_list_refresh(
    *, user: Any, filters: SessionListFilters, ids: list[str], since: Cursor | None
) -> SessionListRefresh:
    """The rows ``ids`` (:data:`REFRESH_IDS_MAX` at most) of the sessions ``user`` may see
    that still match ``filters`` (its cursors aside), and the count of newer ones than
    ``since``."""
    ids = list(dict.fromkeys(ids))[:REFRESH_IDS_MAX]
    matching = _filtered(user, replace(filters, after=None, before=None))
    rows = list(
        matching.filter(pk__in=ids).values(*_FIELDS, *COLUMNS).order_by("-last_update_time", "-id")
    )
    newer = 0
    if since is not None:
        newer = len(
            matching.filter(_newer_than(since))
            .exclude(pk__in=ids)
            .order_by()
            .values_list("pk", flat=True)[:NEWER_COUNTED_MAX]
        )
    return SessionListRefresh(rows=_page(user, rows, newer=None, older=None).rows, newer=newer)


def session_contents(*, session: AgentSession) -> dict[str, int]:
    """What deleting ``session`` removes, counted: ``events``, ``runs``, ``spans``; and
    ``active``, its runs still queued or running (while there are any it is not deleted)."""
    runs, active = session_run_counts(session_id=session.pk)
    return {
        "events": session.event_count,
        "runs": runs,
        "spans": span_count(session_id=session.pk),
        "active": active,
    }
