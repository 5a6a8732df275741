"""System check of the live socket (``agentdash.E005``): the websocket stack of the ASGI
application in ``settings.ASGI_APPLICATION`` sits behind the origin validator."""

from __future__ import annotations

from typing import Any

from channels.security.websocket import OriginValidator
from django.conf import settings
from django.core.checks import Error, register
from django.utils.module_loading import import_string


@register("security")
def check_websocket_origin_validation(app_configs: Any, **kwargs: Any) -> list[Error]:
    """Every websocket route must sit behind ``AllowedHostsOriginValidator``."""
    path = getattr(settings, "ASGI_APPLICATION", None)
    if not path:
        return []
    try:
        application = import_string(path)
    except ImportError as exc:
        return [
            Error(
                f"ASGI_APPLICATION {path!r} does not import: {exc}.",
                id="agentdash.E005",
            )
        ]
    # Through the ASGI middleware around the router (each keeps the app it wraps as ``app``).
    for _ in range(10):
        if hasattr(application, "application_mapping") or not hasattr(application, "app"):
            break
        application = application.app
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
