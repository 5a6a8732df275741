"""Who may do what with a session over its websocket, read fresh from the database."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.http import Http404

from agentdash.agent_sessions.models import AgentSession
from agentdash.agent_sessions.selectors import session_get_for_user

SEE_ALL = "agent_sessions.view_all_sessions"
EDIT_STATE = "agent_sessions.edit_session_state"
CANCEL_RUNS = "runs.cancel_run"
SWITCH_CALLBACKS = "controls.change_callbacksetting"
ACTION_PERMISSIONS = (SEE_ALL, EDIT_STATE, CANCEL_RUNS, SWITCH_CALLBACKS)


@dataclass(frozen=True)
class Access:
    """What one user may do with one session, as of the moment it was read (permissions are
    read then too: checking them later must not touch the database from the event loop)."""

    user: Any = None
    session: AgentSession | None = None
    permissions: frozenset[str] = frozenset()

    @property
    def may_see(self) -> bool:
        return self.session is not None

    @property
    def is_owner(self) -> bool:
        return self.session is not None and self.session.owner_id == getattr(self.user, "pk", None)

    @property
    def operator(self) -> bool:
        return SEE_ALL in self.permissions

    def has_perm(self, perm: str) -> bool:
        return perm in self.permissions


def access_for(*, user: Any, session_id: str) -> Access:
    """``user``'s access to the session, from a fresh read of the user (active, groups,
    permissions) and the session. No access for anonymous or inactive users, or a session
    that is missing or not theirs (unless they are an operator)."""
    if user is None or not getattr(user, "is_authenticated", False):
        return Access()
    fresh = get_user_model().objects.filter(pk=user.pk, is_active=True).first()
    if fresh is None:
        return Access()
    try:
        session = session_get_for_user(user=fresh, session_id=session_id)
    except (PermissionDenied, Http404):
        return Access(user=fresh)
    permissions = frozenset(p for p in ACTION_PERMISSIONS if fresh.has_perm(p))
    return Access(user=fresh, session=session, permissions=permissions)
