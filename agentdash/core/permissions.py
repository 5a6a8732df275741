"""Roles. A *user* chats and sees their own sessions; an *operator* (membership of the
``Operators`` group, i.e. its permissions) sees everything and changes controls; an *admin*
is a superuser with Django admin."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied

OPERATORS_GROUP = "Operators"

OPERATOR_PERMISSIONS = (
    "agent_sessions.view_all_sessions",
    "agent_sessions.edit_session_state",
    "runs.view_run",
    "runs.cancel_run",
    "controls.view_callbacksetting",
    "controls.add_callbacksetting",
    "controls.change_callbacksetting",
    "controls.view_policy",
    "controls.add_policy",
    "controls.change_policy",
    "core.view_auditentry",
    "spans.view_span",
    "spans.view_modelprice",
    "spans.add_modelprice",
    "spans.change_modelprice",
    "changes.view_sessionchange",
    "registry.view_agentrecord",
    "ingest.view_ingestkey",
    "ingest.add_ingestkey",
    "ingest.change_ingestkey",  # revoking is a change
    "monitor.view_alertrule",
    "monitor.add_alertrule",
    "monitor.change_alertrule",
    "monitor.delete_alertrule",
    "monitor.view_alertevent",
    "scores.view_scoredefinition",
    "scores.add_scoredefinition",
    "scores.change_scoredefinition",
    "scores.view_score",
    "scores.view_evaluatorrule",
    "scores.add_evaluatorrule",
    "scores.change_evaluatorrule",
    "scores.view_evaluation",
    "instructions.view_instructionversion",
    "instructions.add_instructionversion",
)


class OperatorRequired(PermissionDenied):
    """Refused because the user is not an operator. The 403 page (templates/403.html) says
    so: the role that would be allowed is known here, unlike for a bare ``PermissionDenied``."""

    role = "operator"


class PermissionRequired(PermissionDenied):
    """Refused for want of one permission (``permission``, as ``app_label.codename``). The
    403 page names it and, when the Operators group has it, the role (``role``)."""

    def __init__(self, permission: str, reason: str) -> None:
        super().__init__(reason)
        self.permission = permission
        self.role = "operator" if permission in OPERATOR_PERMISSIONS else None


def is_operator(user: Any) -> bool:
    """True for users who may see every session and change controls."""
    return bool(
        getattr(user, "is_authenticated", False)
        and user.has_perm("agent_sessions.view_all_sessions")
    )


def can_edit_state(user: Any) -> bool:
    return bool(
        getattr(user, "is_authenticated", False)
        and user.has_perm("agent_sessions.edit_session_state")
    )


def owner_or_operator_required(session: Any, actor: Any) -> None:
    """``PermissionDenied`` unless ``actor`` owns ``session`` or is an operator: who may
    answer what a session's run waits on (a local run's request, a remote app's pause)."""
    owner = getattr(session, "owner_id", None)
    if not (is_operator(actor) or (owner is not None and owner == getattr(actor, "pk", None))):
        raise PermissionDenied("only the session's owner or an operator may answer")
