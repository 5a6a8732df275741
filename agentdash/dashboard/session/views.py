"""The session page, and renaming and deleting a session."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import (
    HttpRequest,
    HttpResponse,
    JsonResponse,
)
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from agentdash.agent_sessions.selectors import (
    session_fork_links,
    session_get_for_user,
)
from agentdash.agent_sessions.services import session_title_update
from agentdash.core.permissions import is_operator
from agentdash.core.views import local_path
from agentdash.dashboard.session.forms import SessionRenameForm
from agentdash.dashboard.session.selectors import (
    session_page_data,
    session_remote_processes,
    session_snapshot_data,
)
from agentdash.dashboard.sessions_list.reads import session_contents
from agentdash.runs.services import SessionBusy, session_delete_idle

if TYPE_CHECKING:
    pass


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
            # Django's type hints: an ErrorList yields its messages (str), not ValidationErrors.
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
    operator = is_operator(request.user)
    return render(
        request,
        "dashboard/session.html",
        {
            "session": session,
            "is_operator": operator,
            "remote_processes": session_remote_processes(session=session) if operator else [],
            "page_data": session_page_data(session=session, user=request.user, snapshot=snapshot),
            "snapshot": snapshot,
            "fork_links": session_fork_links(user=request.user, session=session),
        },
    )
