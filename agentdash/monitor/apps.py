"""The numbers of the service and its agents over time: ``/metrics`` for Prometheus."""

from django.apps import AppConfig


class MonitorConfig(AppConfig):
    name = "agentdash.monitor"
    label = "monitor"
    verbose_name = "Monitor"
