"""Sessions, events and state, stored for the runtime."""

from django.apps import AppConfig


class AgentSessionsConfig(AppConfig):
    name = "agentdash.agent_sessions"
    label = "agent_sessions"
    verbose_name = "Agent sessions"
