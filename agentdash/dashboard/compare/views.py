"""The Compare page: ``GET /compare/?a=<session id>&b=<session id>``, and runs with
``&a_run=<run id>&b_run=<run id>`` (docs/ARCHITECTURE.md, "Compare").

- ``a`` alone: the picker — another session of the same agent, or two runs of ``a``.
- ``a`` and ``b``: the two sessions compared; ``a_run``/``b_run`` narrow a side to one run
  of its session. ``a`` with ``a_run`` and ``b_run`` but no ``b`` compares two runs of ``a``.

Both sessions must be visible to the user (``session_get_for_user``): another's session, a
missing one and a run that is not of its session are all a 404, so ids are never confirmed.
Parameters that are not an id (too long, not a number) are a 400.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from agentdash.agent_sessions.ids import SESSION_ID_MAX_LENGTH
from agentdash.agent_sessions.selectors import session_get_for_user, session_list_for_user
from agentdash.core.permissions import is_operator
from agentdash.dashboard.compare.reads import side_read, sides_compare
from agentdash.runs.selectors import session_run, session_runs_first

if TYPE_CHECKING:
    from agentdash.agent_sessions.models import AgentSession
    from agentdash.runs.models import Run

PICK_SESSIONS = 100
"""Sessions offered by the picker (the newest)."""
PICK_RUNS = 200
_MAX_ID = 2**63 - 1


class CompareForm(forms.Form):
    """What the page compares (the query string)."""

    a = forms.CharField(max_length=SESSION_ID_MAX_LENGTH, strip=False)
    b = forms.CharField(max_length=SESSION_ID_MAX_LENGTH, strip=False, required=False)
    a_run = forms.IntegerField(min_value=1, max_value=_MAX_ID, required=False)
    b_run = forms.IntegerField(min_value=1, max_value=_MAX_ID, required=False)


def _run_of(session: AgentSession, run_id: int | None) -> Run | None:
    if run_id is None:
        return None
    run = session_run(session_id=session.id, run_id=run_id)
    if run is None:
        raise Http404("no such run in that session")
    return run


def _runs_of(session: AgentSession) -> list[Run]:
    return session_runs_first(session_id=session.id, limit=PICK_RUNS)


@login_required
@require_GET
def compare(request: HttpRequest) -> HttpResponse:
    """Two sessions or runs side by side (the module docstring says which), or the picker."""
    form = CompareForm(request.GET)
    context: dict[str, Any] = {"is_operator": is_operator(request.user)}
    if not form.is_valid():
        said = [f"{name}: {e}" for name, errors in form.errors.items() for e in errors]
        return render(
            request, "dashboard/compare_pick.html", {**context, "problems": said}, status=400
        )
    data = form.cleaned_data
    a = session_get_for_user(user=request.user, session_id=data["a"])
    a_run = _run_of(a, data["a_run"])
    if not data["b"] and data["b_run"] is None:
        others = (
            session_list_for_user(user=request.user)
            .filter(app_name=a.app_name)
            .exclude(pk=a.pk)
            .order_by("-last_update_time", "-id")[:PICK_SESSIONS]
        )
        return render(
            request,
            "dashboard/compare_pick.html",
            {**context, "a": a, "a_run": a_run, "others": others, "runs": _runs_of(a)},
        )
    b = session_get_for_user(user=request.user, session_id=data["b"]) if data["b"] else a
    b_run = _run_of(b, data["b_run"])
    left, right = side_read(session=a, run=a_run), side_read(session=b, run=b_run)
    return render(
        request,
        "dashboard/compare.html",
        {
            **context,
            "comparison": sides_compare(left=left, right=right),
            "left": left,
            "right": right,
        },
    )
