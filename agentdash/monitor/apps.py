"""The numbers of the service and its agents over time: the Monitor page and its JSON,
``/metrics`` for Prometheus, and alert rules checked by every server and worker process."""

from django.apps import AppConfig


class MonitorConfig(AppConfig):
    name = "agentdash.monitor"
    label = "monitor"
    verbose_name = "Monitor"

    def ready(self) -> None:
        from agentdash.monitor.alerts import alerts_forever
        from agentdash.runs.host import run_host

        run_host().service_register("agentdash.alerts", lambda h: alerts_forever(), runs_only=False)
