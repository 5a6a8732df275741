"""Views every page shares: the theme toggle for a browser without scripts."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from agentdash.core.theme import THEME_COOKIE, THEME_COOKIE_MAX_AGE, theme_parse


@require_POST
def theme_set(request: HttpRequest) -> HttpResponse:
    """The toggle's form (its buttons submit ``theme``): stores the choice in the theme
    cookie and goes back to ``next`` when that is a path on this site, else to the home
    page. An unknown choice stores ``system``. With scripts on, theme.js does the same
    without leaving the page."""
    choice = theme_parse(request.POST.get("theme"))
    target = request.POST.get("next", "")
    local = target.startswith("/") and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    response = HttpResponseRedirect(target if local else "/")
    response.set_cookie(
        THEME_COOKIE,
        choice,
        max_age=THEME_COOKIE_MAX_AGE,
        samesite="Lax",
        secure=request.is_secure(),
        httponly=False,  # theme.js writes it too; it holds nothing secret
    )
    return response
