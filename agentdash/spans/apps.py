"""The span store: every OpenTelemetry span of a session's runs, and the span processor that
hands them over."""

from django.apps import AppConfig


class SpansConfig(AppConfig):
    name = "agentdash.spans"
    label = "spans"
    verbose_name = "Spans"

    def ready(self) -> None:
        from agentdash.changes.items import item_kind_register
        from agentdash.changes.models import SessionChange
        from agentdash.spans.change_items import span_trimmed, spans_load

        item_kind_register(SessionChange.Kind.SPAN, load=spans_load, trim=span_trimmed)
