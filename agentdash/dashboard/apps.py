"""The pages people use."""

from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "agentdash.dashboard"
    label = "dashboard"
    verbose_name = "Dashboard"
