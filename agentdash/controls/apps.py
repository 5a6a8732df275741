"""Callback switches and policies that operators change."""

from django.apps import AppConfig


class ControlsConfig(AppConfig):
    name = "agentdash.controls"
    label = "controls"
    verbose_name = "Controls"
