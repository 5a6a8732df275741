"""System checks for the invariants the security model rests on (ids ``agentdash.E00x``)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, register

CSP_MIDDLEWARE = "agentdash.core.middleware.ContentSecurityPolicyMiddleware"


@register("security")
def check_csp(app_configs: Any, **kwargs: Any) -> list[Error]:
    if CSP_MIDDLEWARE not in settings.MIDDLEWARE:
        return [
            Error(
                "The Content-Security-Policy middleware is not installed.",
                hint=f"Add {CSP_MIDDLEWARE!r} to MIDDLEWARE.",
                id="agentdash.E001",
            )
        ]
    return []


@register("security")
def check_sanitizer_allowlist(app_configs: Any, **kwargs: Any) -> list[Error]:
    from agentdash.core import rendering

    errors = []
    dangerous = {"img", "style", "script", "iframe", "object", "embed", "svg", "math", "form"}
    bad_tags = sorted(dangerous & set(rendering.ALLOWED_TAGS))
    if bad_tags:
        errors.append(
            Error(
                f"The sanitizer allows dangerous tags: {', '.join(bad_tags)}.",
                id="agentdash.E002",
            )
        )
    attrs = {a for names in rendering.ALLOWED_ATTRIBUTES.values() for a in names}
    bad_attrs = sorted(a for a in attrs if a.startswith("on") or a in ("style", "src", "srcdoc"))
    if bad_attrs:
        errors.append(
            Error(
                f"The sanitizer allows dangerous attributes: {', '.join(bad_attrs)}.",
                id="agentdash.E003",
            )
        )
    bad_schemes = sorted(set(rendering.ALLOWED_URL_SCHEMES) - {"http", "https", "mailto"})
    if bad_schemes:
        errors.append(
            Error(
                f"The sanitizer allows URL schemes beyond http/https/mailto: {bad_schemes}.",
                id="agentdash.E004",
            )
        )
    return errors


@register("security")
def check_websocket_origin_validation(app_configs: Any, **kwargs: Any) -> list[Error]:
    """Every websocket route must sit behind ``AllowedHostsOriginValidator``."""
    from channels.security.websocket import OriginValidator

    from agentdash.asgi import application

    routes = getattr(application, "application_mapping", {})
    websocket = routes.get("websocket")
    if websocket is not None and not isinstance(websocket, OriginValidator):
        return [
            Error(
                "The websocket application is not wrapped in AllowedHostsOriginValidator.",
                hint="Wrap it: AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(...))).",
                id="agentdash.E005",
            )
        ]
    return []


@register("security", deploy=True)
def check_demo_password(app_configs: Any, **kwargs: Any) -> list[Error]:
    from agentdash.conf import agentdash_setting

    if not settings.DEBUG and agentdash_setting("DEMO_PASSWORD"):
        return [
            Error(
                "AGENTDASH_DEMO_PASSWORD is set with DEBUG off.",
                hint="Demo accounts are for development; unset it in production.",
                id="agentdash.E006",
            )
        ]
    return []
