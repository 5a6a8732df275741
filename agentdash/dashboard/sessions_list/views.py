"""The sessions list (the home page): the sessions a user may see, filtered and paged."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import (
    HttpRequest,
    HttpResponse,
)
from django.shortcuts import render

from agentdash.core.permissions import is_operator
from agentdash.dashboard.sessions_list.forms import SessionListForm
from agentdash.dashboard.sessions_list.reads import session_list_page
from agentdash.registry.selectors import agent_list

if TYPE_CHECKING:
    pass


_FILTER_NAMES = ("q", "agent", "status", "with_errors", "owner", "runs_from", "runs_to", "outcome")


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
        kept = [(name, value) for name, value in kept if name != "owner"]
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
        },
    )
