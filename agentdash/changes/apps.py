"""The per-session change log every live client catches up from."""

from django.apps import AppConfig


class ChangesConfig(AppConfig):
    name = "agentdash.changes"
    label = "changes"
    verbose_name = "Session changes"

    def ready(self) -> None:
        from agentdash.changes import checks  # noqa: F401  (registers the system checks)
