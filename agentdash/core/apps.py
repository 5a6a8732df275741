"""Permissions, audit, security headers, rendering and system checks."""

from typing import Any

from django.apps import AppConfig, apps
from django.db.models.signals import post_migrate


def _ensure_roles(sender: AppConfig, using: str = "default", **kwargs: Any) -> None:
    """After migrate (and after every flush, which sends post_migrate too): the roles need
    every app's permissions, which Django creates app by app on this same signal, so the roles
    are made once, on the signal for the last app that has models — not once per app."""
    with_models = [config for config in apps.get_app_configs() if config.models_module]
    if not with_models or sender is not with_models[-1]:
        return
    from agentdash.core.services import roles_ensure

    roles_ensure(using=using)


class CoreConfig(AppConfig):
    name = "agentdash.core"
    label = "core"
    verbose_name = "Core"

    def ready(self) -> None:
        from agentdash.core import checks  # noqa: F401  (registers the system checks)

        post_migrate.connect(_ensure_roles, dispatch_uid="agentdash.core.roles")
