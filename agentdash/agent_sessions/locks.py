"""A session's row lock: what must happen one at a time in a session (its runs taking turns,
answers to its approvals, replays starting, its deletion) serializes on it. Only this app
touches session rows; the others ask for the lock here."""

from __future__ import annotations

from agentdash.agent_sessions.models import AgentSession
from agentdash.core.prepared import PreparedQuery

_HELD: PreparedQuery[dict[str, str]] = PreparedQuery(
    lambda session_id: AgentSession.objects.select_for_update().filter(pk=session_id).values("pk")
)


def session_lock(*, session_id: str) -> bool:
    """Lock the session's row until the caller's transaction ends (call it inside one);
    whether the session exists."""
    return bool(_HELD.rows(session_id))
