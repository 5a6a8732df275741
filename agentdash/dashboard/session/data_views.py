"""The session page's data over HTTP (docs/PROTOCOL.md, "Pages over HTTP"): the snapshot it
starts from, its spans as summaries page by page, one span in full, older chat events. Each
checks, as the page does, that the user may see the session (a 404 otherwise); a bad
parameter is a 400 naming it, as JSON."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from agentdash.agent_sessions.selectors import (
    EVENTS_PAGE_DEFAULT,
    EVENTS_PAGE_MAX,
    session_events_page,
    session_get_for_user,
)
from agentdash.dashboard.json_views import BadParameter, data_view, int_param
from agentdash.dashboard.session.selectors import session_snapshot_data, span_links_for_user
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


@data_view
def session_snapshot(request: HttpRequest, session_id: str) -> JsonResponse:
    """Where the session page starts: seq, latest runs and events, span count, state."""
    session = session_get_for_user(user=request.user, session_id=session_id)
    return JsonResponse(session_snapshot_data(session=session, user=request.user))


@data_view
def session_spans(request: HttpRequest, session_id: str) -> JsonResponse:
    """One page of span summaries: ``?after=<the previous page's next>&limit=<1..10000>``,
    with ``&until=<cursor>`` a page of a plan (``session_spans_plan``)."""
    session = session_get_for_user(user=request.user, session_id=session_id)
    limit = int_param(request, "limit", default=PAGE_DEFAULT, low=1, high=PAGE_MAX)
    after, until = request.GET.get("after"), request.GET.get("until")
    for field, cursor in (("after", after), ("until", until)):
        try:
            if cursor is not None:
                cursor_parse(cursor)
        except BadCursor as exc:
            raise BadParameter(field, str(exc)) from exc
    page = span_summaries(session_id=session.id, after=after, limit=limit, until=until)
    return JsonResponse({"fields": SUMMARY_FIELDS, "rows": page.rows, "next": page.next})


@data_view
def session_spans_plan(request: HttpRequest, session_id: str) -> JsonResponse:
    """``?after=<a page's next>&size=<1..10000>``: ``plan``, the cursors the pages after it
    begin at, ``size`` spans apart (``span_page_plan``), for a client that asks for them at
    once, each between two cursors. Asked for after the first page: it never holds up the
    first rows."""
    session = session_get_for_user(user=request.user, session_id=session_id)
    size = int_param(request, "size", default=PAGE_DEFAULT, low=1, high=PAGE_MAX)
    after = request.GET.get("after")
    if after is None:
        raise BadParameter("after", "after is the cursor the plan starts at: a page's next")
    try:
        plan = span_page_plan(session_id=session.id, after=after, size=int(size or 1))
    except BadCursor as exc:
        raise BadParameter("after", str(exc)) from exc
    return JsonResponse({"plan": plan})


@data_view
def session_span_search(request: HttpRequest, session_id: str) -> JsonResponse:
    """The spans whose attributes, events, name or status message contain ``?q=`` (any case):
    their keys in start order, at most ``?limit=<1..10000>`` (answered as ``limit``);
    ``truncated`` when more match, and then ``notice``, the sentence that says where the
    search stopped and how to narrow it (else ``null``)."""
    session = session_get_for_user(user=request.user, session_id=session_id)
    limit = int_param(request, "limit", default=SEARCH_DEFAULT, low=1, high=SEARCH_MAX)
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


@data_view
def session_span(
    request: HttpRequest, session_id: str, trace_id: str, span_id: str
) -> JsonResponse:
    """One span of the session in full (attributes, events), with the seq that wrote it; a
    span sent from outside with its ``source`` (resource and scope) and, for each of its
    links that points at a stored span the reader may see, that span's ``session``."""
    session = session_get_for_user(user=request.user, session_id=session_id)
    found = span_detail(session_id=session.id, trace_id=trace_id, span_id=span_id)
    if found is None:
        error = {"code": "not_found", "message": "no such span in this session"}
        return JsonResponse({"error": error}, status=404)
    found["links"] = span_links_for_user(user=request.user, session_id=session.id, span=found)
    return JsonResponse(found)


@data_view
def session_events(request: HttpRequest, session_id: str) -> JsonResponse:
    """Chat events, oldest first: ``?before=<events_before>&limit=<1..200>`` the page before
    a position (without ``before``: the latest); ``?after=<position>`` the page after one,
    with ``after``, the position to ask the next with (``null``: it reaches the latest)."""
    session = session_get_for_user(user=request.user, session_id=session_id)
    before = int_param(request, "before", default=None, low=1, high=2**63 - 1)
    after = int_param(request, "after", default=None, low=0, high=2**63 - 1)
    if before is not None and after is not None:
        raise BadParameter("after", "ask for the events before a position or after one")
    limit = int_param(request, "limit", default=EVENTS_PAGE_DEFAULT, low=1, high=EVENTS_PAGE_MAX)
    page = session_events_page(session_id=session.id, before=before, after=after, limit=limit)
    return JsonResponse({"events": page.events, "before": page.before, "after": page.after})
