"""The sessions list (the home page): the sessions a user may see, filtered and paged."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import (
    HttpRequest,
    HttpResponse,
)
from django.shortcuts import render

from agentdash.core.permissions import is_operator
from agentdash.dashboard.sessions_list.forms import SessionListForm
from agentdash.dashboard.sessions_list.reads import (
    STEP_FILTERS,
    SessionListFilters,
    session_list_page,
    step_parts,
)
from agentdash.registry.selectors import agent_list

_FILTER_NAMES = ("q", "agent", "status", "with_errors", "judges", "owner", "runs_from", "runs_to",
                 "outcome", "steps_from", "steps_to", "step", "step_name", "scores_from",
                 "scores_to", "score", "score_value", "sort")  # fmt: skip
_OPERATORS_ONLY = ("owner", "judges")


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """The sessions list (filtered and paged by the query string: ``SessionListForm``) and
    the agents to start a chat with."""
    form = SessionListForm(request.GET)
    form.is_valid()
    filters = form.filters()
    operator = is_operator(request.user)
    kept = [(name, request.GET[name]) for name in _FILTER_NAMES if request.GET.get(name)]
    if not operator:
        kept = [(name, value) for name, value in kept if name not in _OPERATORS_ONLY]
    return render(
        request,
        "dashboard/home.html",
        {
            "page": session_list_page(user=request.user, filters=filters),
            "filters": form,
            "filtered": bool(kept),
            "paged": filters.after is not None or filters.before is not None,
            "query": urlencode(kept),  # the filters, for the pages' links
            "here": request.get_full_path(),  # where renaming or deleting comes back to
            "agents": agent_list(),
            "is_operator": operator,
            "step_window": STEP_FILTERS.get(filters.step, "")
            if filters.steps_from and filters.steps_to
            else "",
            "find_query": _find_query(filters),
        },
    )


def _find_query(filters: SessionListFilters) -> str:
    """What a session's link asks its timeline's find bar, when the list shows the sessions
    behind one of the Monitor's charts of steps: the steps it came for."""
    if not (filters.steps_from and filters.steps_to and filters.step in STEP_FILTERS):
        return ""
    kind, error = step_parts(filters.step)
    if kind == "wait":  # the tool that asked started before its run stopped to wait
        return urlencode({"find_kind": "tool"})
    found = {
        "find_kind": "callback" if kind == "decision" else kind,
        "find_from": filters.steps_from.isoformat(),
        "find_to": filters.steps_to.isoformat(),
    }
    if error:
        found["find_status"] = "error"
    if filters.step_name:
        found["find_text"] = filters.step_name
    return urlencode(found)
