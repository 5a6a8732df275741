"""Writes of the core app."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser, Group, Permission, User
from django.db.models import Q

from agentdash.core.models import AuditEntry
from agentdash.core.permissions import OPERATOR_PERMISSIONS, OPERATORS_GROUP
from agentdash.core.request_context import current_request_id

Actor = User | AnonymousUser | None
"""Who makes a change: a person (``request.user``, signed in or not) or ``None``, the system."""


def audit_record(
    *,
    actor: Actor,
    action: str,
    target_type: str,
    target_id: str,
    before: Any = None,
    after: Any = None,
    reason: str = "",
) -> AuditEntry:
    """Append one audit row. Call it inside the transaction that makes the change, so the
    change and its record commit together or not at all."""
    user = actor if actor is not None and actor.is_authenticated else None
    return AuditEntry.objects.create(
        actor=user,
        actor_label=user.get_username() if user is not None else "system",
        action=action,
        target_type=target_type,
        target_id=str(target_id),
        before=before,
        after=after,
        reason=reason,
        request_id=current_request_id(),
    )


def roles_ensure(*, using: str = "default") -> None:
    """Create the Operators group and give it the operator permissions (idempotent; three
    queries whatever the number of permissions)."""
    group, _ = Group.objects.using(using).get_or_create(name=OPERATORS_GROUP)
    by_app: dict[str, list[str]] = {}
    for dotted in OPERATOR_PERMISSIONS:
        app_label, codename = dotted.split(".", 1)
        by_app.setdefault(app_label, []).append(codename)
    if not by_app:
        return
    match = Q()
    for app_label, codenames in by_app.items():
        match |= Q(content_type__app_label=app_label, codename__in=codenames)
    group.permissions.add(*Permission.objects.using(using).filter(match))
