"""One agent invocation each: its lifecycle and outcome."""

from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "agentdash.runs"
    label = "runs"
    verbose_name = "Runs"

    def ready(self) -> None:
        from agentdash.runs import checks  # noqa: F401  (registers the system checks)
