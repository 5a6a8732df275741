"""The playground: a model call of a session sent again, edited, its answer kept beside the
original (docs/PLAYGROUND.md)."""

from django.apps import AppConfig


class PlaygroundConfig(AppConfig):
    name = "agentdash.playground"
    label = "playground"
    verbose_name = "Playground"
