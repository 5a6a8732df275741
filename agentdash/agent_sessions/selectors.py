"""Reads of sessions, always through the user's permissions."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from agentdash.agent_sessions.models import AgentSession
from agentdash.core.permissions import is_operator


def session_list_for_user(*, user: Any) -> QuerySet[AgentSession]:
    """Sessions ``user`` may see, newest first: every session for operators, their own for
    everyone else, none for anonymous users."""
    sessions = AgentSession.objects.select_related("owner").order_by("-last_update_time")
    if not getattr(user, "is_authenticated", False):
        return sessions.none()
    if is_operator(user):
        return sessions
    return sessions.filter(owner=user)
