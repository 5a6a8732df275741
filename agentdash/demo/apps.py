"""The demo agents, and demo accounts for development (``manage.py seed_demo``)."""

from django.apps import AppConfig


class DemoConfig(AppConfig):
    name = "agentdash.demo"
    label = "demo"
    verbose_name = "Demo"

    def ready(self) -> None:
        from agentdash.demo import checks  # noqa: F401  (registers the system checks)
