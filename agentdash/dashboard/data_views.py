"""The session page's data over HTTP (docs/PROTOCOL.md, "Pages over HTTP"): the snapshot it
starts from, its spans as summaries page by page, one span in full, older chat events. Each
checks, as the page does, that the user may see the session (a 404 otherwise); a bad
parameter is a 400 naming it, as JSON."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, overload

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.gzip import gzip_page
from django.views.decorators.http import require_GET

from agentdash.agent_sessions.selectors import (
    EVENTS_PAGE_DEFAULT,
    EVENTS_PAGE_MAX,
    session_events_page,
    session_get_for_user,
)
from agentdash.dashboard.forms import SessionListForm
from agentdash.dashboard.selectors import session_snapshot_data
from agentdash.dashboard.session_list import (
    LIST_START,
    NEWER_COUNTED_MAX,
    REFRESH_IDS_MAX,
    Cursor,
    session_list_refresh,
)
from agentdash.spans.search import LIMIT_DEFAULT as SEARCH_DEFAULT
from agentdash.spans.search import LIMIT_MAX as SEARCH_MAX
from agentdash.spans.search import BadSearch, span_search
from agentdash.spans.selectors import span_detail
from agentdash.spans.summaries import (
    PAGE_DEFAULT,
    PAGE_MAX,
    SUMMARY_FIELDS,
    BadCursor,
    cursor_parse,
    span_page_plan,
    span_summaries,
)

View = Callable[..., JsonResponse]


class BadParameter(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def _data_view(view: View) -> View:
    """Login, GET only, never cached, gzipped; ``BadParameter`` → 400 naming the field."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
        try:
            return view(request, *args, **kwargs)
        except BadParameter as exc:
            error = {"code": "bad_request", "field": exc.field, "message": str(exc)}
            return JsonResponse({"error": error}, status=400)

    return login_required(require_GET(never_cache(gzip_page(wrapped))))


@overload
def _int_param(request: HttpRequest, name: str, *, default: int, low: int, high: int) -> int: ...


@overload
def _int_param(
    request: HttpRequest, name: str, *, default: None, low: int, high: int
) -> int | None: ...


def _int_param(
    request: HttpRequest, name: str, *, default: int | None, low: int, high: int
) -> int | None:
    raw = request.GET.get(name)
    if raw is None or raw == "":
        return default
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 19:
        raise BadParameter(name, f"{name} must be a whole number from {low} to {high}")
    value = int(raw)
    if not low <= value <= high:
        raise BadParameter(name, f"{name} must be a whole number from {low} to {high}")
    return value


@_data_view
def session_snapshot(request: HttpRequest, session_id: str) -> JsonResponse:
    """Where the session page starts: seq, latest runs and events, span count, state."""
    session = session_get_for_user(user=request.user, session_id=session_id)
    return JsonResponse(session_snapshot_data(session=session, user=request.user))


@_data_view
def session_spans(request: HttpRequest, session_id: str) -> JsonResponse:
    """One page of span summaries: ``?after=<the previous page's next>&limit=<1..10000>``,
    with ``&until=<cursor>`` a page of a plan (``session_spans_plan``)."""
    session = session_get_for_user(user=request.user, session_id=session_id)
    limit = _int_param(request, "limit", default=PAGE_DEFAULT, low=1, high=PAGE_MAX)
    after, until = request.GET.get("after"), request.GET.get("until")
    for field, cursor in (("after", after), ("until", until)):
        try:
            if cursor is not None:
                cursor_parse(cursor)
        except BadCursor as exc:
            raise BadParameter(field, str(exc)) from exc
    page = span_summaries(session_id=session.id, after=after, limit=limit, until=until)
    return JsonResponse({"fields": SUMMARY_FIELDS, "rows": page.rows, "next": page.next})


@_data_view
def session_spans_plan(request: HttpRequest, session_id: str) -> JsonResponse:
    """``?after=<a page's next>&size=<1..10000>``: ``plan``, the cursors the pages after it
    begin at, ``size`` spans apart (``span_page_plan``), for a client that asks for them at
    once, each between two cursors. Asked for after the first page: it never holds up the
    first rows."""
    session = session_get_for_user(user=request.user, session_id=session_id)
    size = _int_param(request, "size", default=PAGE_DEFAULT, low=1, high=PAGE_MAX)
    after = request.GET.get("after")
    if after is None:
        raise BadParameter("after", "after is the cursor the plan starts at: a page's next")
    try:
        plan = span_page_plan(session_id=session.id, after=after, size=int(size or 1))
    except BadCursor as exc:
        raise BadParameter("after", str(exc)) from exc
    return JsonResponse({"plan": plan})


@_data_view
def session_span_search(request: HttpRequest, session_id: str) -> JsonResponse:
    """The spans whose attributes, events, name or status message contain ``?q=`` (any case):
    their keys in start order, at most ``?limit=<1..10000>`` (answered as ``limit``);
    ``truncated`` when more match, and then ``notice``, the sentence that says where the
    search stopped and how to narrow it (else ``null``)."""
    session = session_get_for_user(user=request.user, session_id=session_id)
    limit = _int_param(request, "limit", default=SEARCH_DEFAULT, low=1, high=SEARCH_MAX)
    text = request.GET.get("q", "")
    try:
        found = span_search(session_id=session.id, text=text, limit=limit)
    except BadSearch as exc:
        raise BadParameter("q", str(exc)) from exc
    return JsonResponse(
        {
            "q": text,
            "keys": found.keys,
            "truncated": found.truncated,
            "limit": found.limit,
            "notice": found.notice,
        }
    )


@_data_view
def session_span(
    request: HttpRequest, session_id: str, trace_id: str, span_id: str
) -> JsonResponse:
    """One span of the session in full (attributes, events), with the seq that wrote it."""
    session = session_get_for_user(user=request.user, session_id=session_id)
    found = span_detail(session_id=session.id, trace_id=trace_id, span_id=span_id)
    if found is None:
        error = {"code": "not_found", "message": "no such span in this session"}
        return JsonResponse({"error": error}, status=404)
    return JsonResponse(found)


@_data_view
def session_events(request: HttpRequest, session_id: str) -> JsonResponse:
    """Chat events, oldest first: ``?before=<events_before>&limit=<1..200>`` the page before
    a position (without ``before``: the latest); ``?after=<position>`` the page after one,
    with ``after``, the position to ask the next with (``null``: it reaches the latest)."""
    session = session_get_for_user(user=request.user, session_id=session_id)
    before = _int_param(request, "before", default=None, low=1, high=2**63 - 1)
    after = _int_param(request, "after", default=None, low=0, high=2**63 - 1)
    if before is not None and after is not None:
        raise BadParameter("after", "ask for the events before a position or after one")
    limit = _int_param(request, "limit", default=EVENTS_PAGE_DEFAULT, low=1, high=EVENTS_PAGE_MAX)
    page = session_events_page(session_id=session.id, before=before, after=after, limit=limit)
    return JsonResponse({"events": page.events, "before": page.before, "after": page.after})


_ROW_FIELDS = ("id", "title", "first_message", "run_status", "span_count", "error_count")
_ROW_USAGE = ("usage", "usage_tokens", "usage_cost")


@_data_view
def session_rows(request: HttpRequest) -> JsonResponse:
    """The sessions list's rows read again, for a list page kept current by its socket:
    ``?id=<a row's id>`` (repeated, :data:`REFRESH_IDS_MAX` at most) with the page's own
    filters, and ``since=<the newest row's cursor>``. ``rows``: those of them that still
    match the filters, newest activity first, each with the cells the list shows and its
    ``cursor``; ``newer``: how many matching sessions not among them have newer activity
    (:data:`NEWER_COUNTED_MAX` at most; ``since=start``: every one, for an empty page).
    Invalid filters are left out, as the page does."""
    ids = request.GET.getlist("id")
    if len(ids) > REFRESH_IDS_MAX:
        raise BadParameter("id", f"at most {REFRESH_IDS_MAX} ids at a time")
    raw_since = request.GET.get("since")
    since = LIST_START if raw_since == "start" else Cursor.parse(raw_since) if raw_since else None
    if raw_since and since is None:
        raise BadParameter("since", "since is a row's cursor, as the list wrote it, or start")
    form = SessionListForm(request.GET)
    form.is_valid()
    found = session_list_refresh(user=request.user, filters=form.filters(), ids=ids, since=since)
    rows = [
        {
            **{name: row[name] for name in (*_ROW_FIELDS, *_ROW_USAGE)},
            "last_activity": row["last_activity"].isoformat(),
            "cursor": row["cursor"],
        }
        for row in found.rows
    ]
    return JsonResponse({"rows": rows, "newer": found.newer, "newer_max": NEWER_COUNTED_MAX})
