"""Pages: parse the request, check permission, call a selector, render."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from agentdash.agent_sessions.selectors import session_list_for_user
from agentdash.core.permissions import is_operator
from agentdash.registry.selectors import agent_list


@login_required
def home(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "dashboard/home.html",
        {
            "sessions": session_list_for_user(user=request.user)[:100],
            "agents": agent_list(),
            "is_operator": is_operator(request.user),
        },
    )
