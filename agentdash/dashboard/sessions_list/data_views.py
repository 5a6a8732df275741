"""The sessions list's rows read again, for a list page kept current by its socket."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from agentdash.dashboard.json_views import BadParameter, data_view
from agentdash.dashboard.sessions_list.forms import SessionListForm
from agentdash.dashboard.sessions_list.reads import (
    LIST_START,
    NEWER_COUNTED_MAX,
    REFRESH_IDS_MAX,
    Cursor,
    session_list_refresh,
)

_ROW_FIELDS = ("id", "title", "first_message", "run_status", "span_count", "error_count",
               "feedback_up", "feedback_down")  # fmt: skip


_ROW_USAGE = ("usage", "usage_tokens", "usage_cost")


@data_view
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
