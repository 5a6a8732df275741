"""Pages: parse the request, check permission, call a selector or a service, render."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from agentdash.agent_sessions.selectors import session_get_for_user, session_list_for_user
from agentdash.agent_sessions.services import session_create
from agentdash.core.permissions import is_operator
from agentdash.dashboard.forms import NewChatForm
from agentdash.dashboard.selectors import session_page_data, session_snapshot_data
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


@login_required
@require_POST
def session_new(request: HttpRequest) -> HttpResponse:
    """The "New chat" form: a session of the chosen agent, owned by the user; then its page."""
    form = NewChatForm(request.POST)
    if not form.is_valid():
        return HttpResponseBadRequest("Choose one of the configured agents.")
    session = session_create(
        app_name=form.cleaned_data["agent"],
        user_id=str(request.user.pk),
        owner=request.user,
        actor=request.user,
    )
    return redirect("dashboard:session", session_id=session.id)


@login_required
@require_GET
def session_detail(request: HttpRequest, session_id: str) -> HttpResponse:
    """The session page: chat, live timeline and, for operators, controls. Someone else's
    session is a 404 (``session_get_for_user``), as is a missing one. The snapshot the page
    starts from comes with it (no round trip before the latest messages show)."""
    session = session_get_for_user(user=request.user, session_id=session_id)
    snapshot = session_snapshot_data(session=session, user=request.user)
    return render(
        request,
        "dashboard/session.html",
        {
            "session": session,
            "is_operator": is_operator(request.user),
            "page_data": session_page_data(session=session, user=request.user, snapshot=snapshot),
            "snapshot": snapshot,
        },
    )
