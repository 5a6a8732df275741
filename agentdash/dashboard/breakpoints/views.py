"""An operator's breakpoints for a session's agent: where its runs pause for a person (before
a tool, before every model call, after a callback outcome), in this session or in every
session of the agent. Runs that pause wait like tool confirmations: resume, step or cancel
them on the session page (docs/RUNTIME.md, "Breakpoints")."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from agentdash.agent_sessions.selectors import session_get_for_user
from agentdash.controls.breakpoints import breakpoint_add, breakpoint_remove, breakpoints_listed
from agentdash.controls.selectors import BREAKPOINT_KINDS, BREAKPOINT_OUTCOMES, breakpoint_find
from agentdash.core.permissions import OperatorRequired, is_operator
from agentdash.registry.loader import AgentNotRegisteredError
from agentdash.registry.selectors import agent_get
from agentdash.remote.selectors import remote_tools


def _tool_names(agent_name: str) -> list[str]:
    """Every tool of the agent's tree, for the form's choices (none if it is gone)."""
    try:
        root = agent_get(name=agent_name)
    except AgentNotRegisteredError:
        return []
    names: set[str] = set()
    stack: list[Any] = [root]
    while stack:
        agent = stack.pop()
        for tool in getattr(agent, "tools", None) or []:
            name = getattr(tool, "name", None) or getattr(tool, "__name__", None)
            if isinstance(name, str):
                names.add(name)
        stack.extend(getattr(agent, "sub_agents", None) or [])
    return sorted(names)


@login_required
@require_http_methods(["GET", "POST"])
def session_breakpoints(request: HttpRequest, session_id: str) -> HttpResponse:
    session = session_get_for_user(user=request.user, session_id=session_id)
    if not is_operator(request.user):
        raise OperatorRequired("only operators set breakpoints")
    status = 200
    if request.method == "POST":
        try:
            _change(request, session.pk, session.app_name)
        except ValidationError as exc:
            for field, problems in exc.message_dict.items():
                messages.error(request, f"{field.replace('_', ' ')}: {' '.join(problems)}")
            status = 400
        else:
            return redirect("dashboard:session_breakpoints", session_id=session.pk)
    points = breakpoints_listed(agent_names={session.app_name}, session_id=session.pk)
    context = {
        "session": session,
        "points": points,
        "tools": (
            remote_tools(owner_id=session.owner_id, project=session.app_name)
            if session.is_external
            else _tool_names(session.app_name)
        ),
        "kinds": BREAKPOINT_KINDS,
        "outcomes": BREAKPOINT_OUTCOMES,
        "is_operator": True,
    }
    return render(request, "dashboard/breakpoints.html", context, status=status)


def _change(request: HttpRequest, session_id: str, agent_name: str) -> None:
    data = request.POST
    reason = data.get("reason", "")[:500]
    if data.get("action") == "remove":
        raw = data.get("id", "")
        point = breakpoint_find(
            breakpoint_id=int(raw) if raw.isdigit() else 0, agent_name=agent_name
        )
        if point is None or point.session_id not in (None, session_id):
            raise ValidationError({"breakpoint": ["no such breakpoint here"]})
        breakpoint_remove(point=point, actor=request.user, reason=reason)
        messages.success(request, f"Removed the breakpoint {point.where}.")
        return
    point = breakpoint_add(
        agent_name=agent_name,
        kind=data.get("kind", ""),
        tool_name=data.get("tool_name", ""),
        outcome=data.get("outcome", ""),
        session_id=session_id if data.get("scope", "session") == "session" else None,
        actor=request.user,
        reason=reason,
    )
    scope = "in this session" if point.session_id else "in every session"
    messages.success(request, f"Runs of {agent_name} now pause {point.where} ({scope}).")
