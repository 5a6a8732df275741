"""Eval sets in ADK's format, and their runs against the agents configured now."""

from django.apps import AppConfig


class EvalsConfig(AppConfig):
    name = "agentdash.evals"
    label = "evals"
    verbose_name = "Evals"
