"""Agents defined in Python, loaded at start-up and mirrored in the database."""

from django.apps import AppConfig


class RegistryConfig(AppConfig):
    name = "agentdash.registry"
    label = "registry"
    verbose_name = "Agents"
