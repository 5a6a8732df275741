"""OTLP ingest: spans of agents that run elsewhere, sent over OpenTelemetry's protocol."""

from django.apps import AppConfig


class IngestConfig(AppConfig):
    name = "agentdash.ingest"
    label = "ingest"
    verbose_name = "OTLP ingest"
