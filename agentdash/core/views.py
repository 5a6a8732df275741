"""Views every page shares: the theme toggle for a browser without scripts, the 403 page."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from agentdash.core.permissions import is_operator
from agentdash.core.theme import THEME_COOKIE, THEME_COOKIE_MAX_AGE, theme_parse


def local_path(request: HttpRequest, wanted: str | None) -> str:
    """``wanted`` if it is a path of this site (a safe place to go back to), else ``/``."""
    if (
        wanted
        and wanted.startswith("/")
        and url_has_allowed_host_and_scheme(
            wanted, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        )
    ):
        return wanted
    return "/"


@require_POST
def theme_set(request: HttpRequest) -> HttpResponse:
    """The toggle's form (its buttons submit ``theme``): stores the choice in the theme
    cookie and goes back to ``next`` when that is a path on this site, else to the home
    page. An unknown choice stores ``system``. With scripts on, theme.js does the same
    without leaving the page."""
    choice = theme_parse(request.POST.get("theme"))
    response = HttpResponseRedirect(local_path(request, request.POST.get("next")))
    response.set_cookie(
        THEME_COOKIE,
        choice,
        max_age=THEME_COOKIE_MAX_AGE,
        samesite="Lax",
        secure=request.is_secure(),
        httponly=False,  # theme.js writes it too; it holds nothing secret
    )
    return response


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """The site's answer to ``PermissionDenied`` (``handler403`` in agentdash/urls.py), always
    status 403. A request that asks for JSON (``Accept`` names ``application/json``) gets
    ``{"error": {"code": "forbidden", "message": ..., "role": ...}}`` (``role`` only when the
    refusal names one; ``permission`` when one permission was missing); any other gets
    templates/403.html: what was refused, which role would be allowed (``exception.role``, e.g.
    :class:`agentdash.core.permissions.OperatorRequired`), which permission was missing
    (:class:`agentdash.core.permissions.PermissionRequired`) and the way back."""
    reason = str(exception or "")
    role = getattr(exception, "role", None)
    permission = getattr(exception, "permission", None)
    if "application/json" in request.headers.get("Accept", ""):
        error = {"code": "forbidden", "message": reason or "not allowed"}
        if role:
            error["role"] = role
        if permission:
            error["permission"] = permission
        return JsonResponse({"error": error}, status=403)
    context = {
        "reason": reason,
        "role": role,
        "permission": permission,
        "is_operator": is_operator(request.user),
    }
    return render(request, "403.html", context, status=403)
