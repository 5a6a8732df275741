from __future__ import annotations

from django.http import HttpRequest

from agentdash.core.theme import theme_of, theme_page_data


def csp_nonce(request: HttpRequest) -> dict[str, str]:
    return {"csp_nonce": getattr(request, "csp_nonce", "")}


def theme(request: HttpRequest) -> dict[str, dict[str, str | int]]:
    """``theme``: the colour theme this browser chose, as base.html uses it
    (:func:`agentdash.core.theme.theme_page_data`)."""
    return {"theme": theme_page_data(theme_of(request))}
