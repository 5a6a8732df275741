"""Agents defined in Python, loaded at start-up and mirrored in the database."""

from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _mirror_agents(sender: Any, using: str = "default", **kwargs: Any) -> None:
    from agentdash.registry.services import agents_mirror

    agents_mirror(using=using)


class RegistryConfig(AppConfig):
    name = "agentdash.registry"
    label = "registry"
    verbose_name = "Agents"

    def ready(self) -> None:
        # Registers agentdash.E010. Agents themselves are imported only when checks run.
        from agentdash.registry import checks  # noqa: F401

        post_migrate.connect(_mirror_agents, sender=self, dispatch_uid="agentdash.registry.mirror")
