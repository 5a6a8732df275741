"""Pages: parse the request, check permission, call a selector or a service, render."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    JsonResponse,
)
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from agentdash.agent_sessions.selectors import (
    session_fork_links,
    session_get_for_user,
    session_is_owned_by,
)
from agentdash.agent_sessions.services import session_title_update
from agentdash.core.permissions import is_operator
from agentdash.core.views import local_path
from agentdash.dashboard.forms import (
    ChatStartForm,
    SessionListForm,
    SessionRenameForm,
    start_token_make,
)
from agentdash.dashboard.selectors import session_page_data, session_snapshot_data
from agentdash.dashboard.session_list import session_contents, session_list_page
from agentdash.registry.selectors import agent_list
from agentdash.runs.services import SessionBusy, session_delete_idle, session_start
from runtime.sessions.base_session_service import SessionExistsError

if TYPE_CHECKING:
    from agentdash.registry.models import AgentRecord

_FILTER_NAMES = ("q", "agent", "status", "with_errors", "owner")


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


def _wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


@login_required
@require_http_methods(["GET", "POST"])
def session_rename(request: HttpRequest, session_id: str) -> HttpResponse:
    """Rename a session: its owner only (others who see it get 403, the rest 404). GET shows
    the form; POST renames (``session_title_update``), then goes back to ``next`` — or,
    asked for JSON (the list's inline rename), answers ``{"title"}`` or ``{"error"}``."""
    session = session_get_for_user(user=request.user, session_id=session_id)
    if session.owner_id is None or session.owner_id != request.user.pk:
        raise PermissionDenied("only the session's owner may rename it")
    if request.method == "GET":
        form = SessionRenameForm(
            initial={"title": session.title, "next": request.GET.get("next", "")}
        )
        return render(request, "dashboard/session_rename.html", {"session": session, "form": form})
    form = SessionRenameForm(request.POST)
    title = ""
    if form.is_valid():
        try:
            title = session_title_update(
                session_id=session.id, title=form.cleaned_data["title"], actor=request.user
            )
        except ValueError as exc:
            form.add_error("title", str(exc)[:1].upper() + str(exc)[1:] + ".")
    if form.errors:
        if _wants_json(request):
            said = [e for errors in form.errors.values() for e in errors]
            # django-stubs: an ErrorList yields its messages (str), not ValidationErrors.
            return JsonResponse({"error": " ".join(said)}, status=400)  # type: ignore[arg-type]
        return render(
            request,
            "dashboard/session_rename.html",
            {"session": session, "form": form},
            status=400,
        )
    if _wants_json(request):
        return JsonResponse({"title": title})
    messages.success(request, f"Renamed to “{title}”.")
    return redirect(local_path(request, form.cleaned_data.get("next")))


@login_required
@require_http_methods(["GET", "POST"])
def session_delete(request: HttpRequest, session_id: str) -> HttpResponse:
    """Delete a session: its owner or an operator (others who see it get 403, the rest
    404). GET asks to confirm, saying what goes; POST deletes (``session_delete_idle``:
    audited; refused with 409 while a run is in progress), then goes back to ``next``."""
    session = session_get_for_user(user=request.user, session_id=session_id)
    mine = session.owner_id is not None and session.owner_id == request.user.pk
    if not (mine or is_operator(request.user)):
        raise PermissionDenied("only the session's owner or an operator may delete it")
    wanted = request.POST.get("next") if request.method == "POST" else request.GET.get("next")
    back = local_path(request, wanted)

    def page(error: str = "", status: int = 200) -> HttpResponse:
        context = {
            "session": session,
            "contents": session_contents(session=session),  # counted only to be shown
            "next": back,
            "error": error,
        }
        return render(request, "dashboard/session_delete.html", context, status=status)

    if request.method == "GET":
        return page()
    try:
        session_delete_idle(session_id=session.id, actor=request.user)
    except SessionBusy as exc:
        return page(str(exc), status=409)
    messages.success(request, f"Deleted “{session.title or session.id}”.")
    return redirect(back)


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
            "fork_links": session_fork_links(user=request.user, session=session),
        },
    )
