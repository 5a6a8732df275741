"""Spans and the per-session change sequence."""

from django.apps import AppConfig


class TimelineConfig(AppConfig):
    name = "agentdash.timeline"
    label = "timeline"
    verbose_name = "Timeline"
