"""Permissions, audit, security headers, rendering and system checks."""

from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _ensure_roles(sender: Any, **kwargs: Any) -> None:
    from agentdash.core.services import roles_ensure

    roles_ensure()


class CoreConfig(AppConfig):
    name = "agentdash.core"
    label = "core"
    verbose_name = "Core"

    def ready(self) -> None:
        from agentdash.core import checks  # noqa: F401  (registers the system checks)

        # Permissions exist only after migrate has run for every app.
        post_migrate.connect(_ensure_roles, dispatch_uid="agentdash.core.roles")
