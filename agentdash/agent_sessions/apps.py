"""Sessions, events and state, stored for the runtime."""

from django.apps import AppConfig


class AgentSessionsConfig(AppConfig):
    name = "agentdash.agent_sessions"
    label = "agent_sessions"
    verbose_name = "Agent sessions"

    def ready(self) -> None:
        from agentdash.agent_sessions.change_items import event_trimmed, events_load
        from agentdash.changes.items import item_kind_register
        from agentdash.changes.models import SessionChange

        item_kind_register(SessionChange.Kind.EVENT, load=events_load, trim=event_trimmed)
