"""New chat: the agent picker and a chat's first message, which stores the session."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
)
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from agentdash.agent_sessions.selectors import (
    session_is_owned_by,
)
from agentdash.dashboard.chat.forms import ChatStartForm, start_token_make
from agentdash.registry.selectors import agent_list
from agentdash.runs.services import session_start
from runtime.sessions.base_session_service import SessionExistsError

if TYPE_CHECKING:
    from agentdash.registry.models import AgentRecord


def _agent_record(name: str) -> AgentRecord:
    record = agent_list().filter(name=name).first()
    if record is None:
        raise Http404("no configured agent has that name")
    return record


def _chat_new_page(
    request: HttpRequest, *, agent: AgentRecord, form: ChatStartForm | None, status: int = 200
) -> HttpResponse:
    # Shown again after a refusal, the page keeps its token — unless the token was the
    # problem: then it gets a new one, so that sending again can work.
    kept = form.data.get("start") if form is not None and "start" not in form.errors else None
    start = kept or start_token_make(uuid.uuid4().hex)
    return render(
        request,
        "dashboard/chat_new.html",
        {
            "agent": agent,
            "start": start,
            "text": form.data.get("text", "") if form is not None else "",
            "errors": [e for errors in form.errors.values() for e in errors] if form else [],
        },
        status=status,
    )


@login_required
@require_GET
def chat_new(request: HttpRequest) -> HttpResponse:
    """New chat (``?agent=<name>``): the agent and a composer. Nothing is stored until the
    first message is sent (:func:`session_new`)."""
    return _chat_new_page(request, agent=_agent_record(request.GET.get("agent", "")), form=None)


@login_required
@require_POST
def session_new(request: HttpRequest) -> HttpResponse:
    """A chat's first message: its session and its first run, together
    (``runs.services.session_start``); then the session's page. The new-chat page's token
    names the session, so the same page sent twice opens the session it started."""
    form = ChatStartForm(request.POST)
    if not form.is_valid() and "agent" in form.errors:
        return HttpResponseBadRequest("Choose one of the configured agents.")
    agent = _agent_record(str(form.data.get("agent", "")))
    if form.errors:
        return _chat_new_page(request, agent=agent, form=form, status=400)
    start = form.cleaned_data["start"]
    try:
        run = session_start(
            agent_name=agent.name,
            text=form.cleaned_data["text"],
            requested_by=request.user,
            session_id=start,
        )
    except SessionExistsError:
        user = request.user
        assert user.is_authenticated  # login_required
        mine = session_is_owned_by(session_id=start, user=user)
        if not mine:
            return HttpResponseBadRequest("This page is out of date: open New chat again.")
        return redirect("dashboard:session", session_id=start)
    except (ValidationError, ValueError) as exc:
        said = exc.messages if isinstance(exc, ValidationError) else [str(exc)]
        form.add_error(None, "; ".join(said))
        return _chat_new_page(request, agent=agent, form=form, status=400)
    return redirect("dashboard:session", session_id=run.session_id)
