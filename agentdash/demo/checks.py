"""System check of the demo accounts (``agentdash.E006``, with ``--deploy``)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, register

from agentdash.core.conf import agentdash_setting


@register("security", deploy=True)
def check_demo_password(app_configs: Any, **kwargs: Any) -> list[Error]:
    if not settings.DEBUG and agentdash_setting("DEMO_PASSWORD"):
        return [
            Error(
                "AGENTDASH_DEMO_PASSWORD is set with DEBUG off.",
                hint="Demo accounts are for development; unset it in production.",
                id="agentdash.E006",
            )
        ]
    return []
