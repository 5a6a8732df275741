"""Writes of the controls app: policies and callback switches, each audited in its own
transaction."""

from __future__ import annotations

import hashlib
from typing import Any, TypedDict

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from agentdash.agent_sessions.models import AgentSession
from agentdash.controls.announce import switch_announce_on_commit
from agentdash.controls.models import (
    CALLBACK_SETTING_TARGET,
    POLICY_TARGET,
    CallbackSetting,
    Policy,
    RateWindow,
)
from agentdash.controls.policies import policy_validate
from agentdash.core.hygiene import text_problem
from agentdash.core.services import Actor, audit_record


class PolicyVersionConflict(Exception):
    """The policy changed since the editor loaded it; their edit was not applied."""

    def __init__(self, *, policy: Policy, expected_version: int, current_version: int) -> None:
        self.policy = policy
        self.expected_version = expected_version
        self.current_version = current_version
        super().__init__(
            f"Policy {policy.name!r} was changed by someone else while you were editing it "
            f"(you started from version {expected_version}; it is now version "
            f"{current_version}). Nothing was saved: reload the policy and apply your change "
            "again."
        )


def policy_snapshot(policy: Policy) -> dict[str, Any]:
    """What the audit trail records of a policy."""
    return {
        "name": policy.name,
        "kind": policy.kind,
        "config": policy.config,
        "agents": list(policy.agents),
        "enabled": policy.enabled,
        "version": policy.version,
    }


def _agents_clean(agents: Any) -> list[str]:
    if not isinstance(agents, list | tuple):
        raise ValidationError({"agents": ["must be a list of agent names."]})
    cleaned: list[str] = []
    for name in agents:
        if not isinstance(name, str) or not name.strip():
            raise ValidationError({"agents": [f"{name!r} is not an agent name."]})
        if name.strip() not in cleaned:
            cleaned.append(name.strip())
    return cleaned


def policy_create(
    *,
    name: str,
    kind: str,
    config: Any,
    agents: list[str] | None = None,
    enabled: bool = True,
    actor: Actor,
    reason: str = "",
) -> Policy:
    """Create a policy at version 1 with a validated config, audited (``policy.create``).

    Raises ``ValidationError`` (see ``policy_validate``; ``agents``) before writing anything.
    """
    cleaned = policy_validate(kind=kind, config=config)
    agent_names = _agents_clean(agents or [])
    with transaction.atomic():
        policy = Policy.objects.create(
            name=name, kind=kind, config=cleaned, agents=agent_names, enabled=enabled, version=1
        )
        audit_record(
            actor=actor,
            action="policy.create",
            target_type=POLICY_TARGET,
            target_id=str(policy.pk),
            after=policy_snapshot(policy),
            reason=reason,
        )
    return policy


def policy_update(
    *,
    policy: Policy,
    config: Any,
    enabled: bool,
    agents: list[str],
    actor: Actor,
    reason: str = "",
    expected_version: int,
) -> Policy:
    """Replace the policy's config, switch and agents if it is still at ``expected_version``.

    Returns the stored policy (a fresh instance; ``policy`` is only used for its id and kind).
    On a change: version + 1 and one ``policy.update`` audit row with before/after, in one
    transaction. An edit that changes nothing writes nothing. Raises ``ValidationError`` for
    a bad config or agents, :class:`PolicyVersionConflict` when someone else saved first.
    """
    cleaned = policy_validate(kind=policy.kind, config=config)
    agent_names = _agents_clean(agents)
    with transaction.atomic():
        current = Policy.objects.select_for_update().get(pk=policy.pk)
        if current.version != expected_version:
            raise PolicyVersionConflict(
                policy=current, expected_version=expected_version, current_version=current.version
            )
        before = policy_snapshot(current)
        if (cleaned, enabled, agent_names) == (current.config, current.enabled, current.agents):
            return current
        # Compare-and-swap as well as the row lock: SQLite has no SELECT ... FOR UPDATE.
        updated = Policy.objects.filter(pk=current.pk, version=expected_version).update(
            config=cleaned,
            enabled=enabled,
            agents=agent_names,
            version=F("version") + 1,
            updated_at=timezone.now(),
        )
        current.refresh_from_db()
        if updated != 1:
            raise PolicyVersionConflict(
                policy=current, expected_version=expected_version, current_version=current.version
            )
        audit_record(
            actor=actor,
            action="policy.update",
            target_type=POLICY_TARGET,
            target_id=str(current.pk),
            before=before,
            after=policy_snapshot(current),
            reason=reason,
        )
    return current


def policy_delete(*, policy: Policy, actor: Actor, reason: str = "") -> None:
    """Delete the policy, audited (``policy.delete``, the last version as ``before``)."""
    with transaction.atomic():
        current = Policy.objects.select_for_update().filter(pk=policy.pk).first()
        if current is None:
            return
        before = policy_snapshot(current)
        current.delete()
        audit_record(
            actor=actor,
            action="policy.delete",
            target_type=POLICY_TARGET,
            target_id=str(policy.pk),
            before=before,
            reason=reason,
        )


class _Scope(TypedDict):
    """A switch's scope: the fields that name it."""

    agent_name: str
    callback_name: str
    session_id: str | None


def callback_setting_target(*, agent_name: str, callback_name: str, session_id: str | None) -> str:
    """The audit target id of a switch: stable across clear and set (unlike the row id)."""
    scope = f"@{session_id}" if session_id is not None else ""
    return f"{agent_name}:{callback_name}{scope}"


def _setting_snapshot(setting: CallbackSetting | None) -> dict[str, Any] | None:
    if setting is None:
        return None
    return {
        "agent_name": setting.agent_name,
        "callback_name": setting.callback_name,
        "session_id": setting.session_id,
        "enabled": setting.enabled,
    }


def _scope_check(*, agent_name: str, callback_name: str, session_id: str | None) -> None:
    errors: dict[str, list[str]] = {}
    if not agent_name.strip():
        errors["agent_name"] = ["A switch belongs to one agent: name it."]
    if not callback_name.strip():
        errors["callback_name"] = ["Name the callback."]
    for field, value in (
        (CallbackSetting.agent_name.field, agent_name),
        (CallbackSetting.callback_name.field, callback_name),
    ):
        limit = field.max_length or 0
        if len(value) > limit:
            errors[field.name] = [f"At most {limit} characters."]
        elif problem := text_problem(value):
            errors[field.name] = [f"The name {problem}."]
    if session_id is not None and not AgentSession.objects.filter(pk=session_id).exists():
        errors["session"] = [f"There is no session {session_id!r}."]
    if errors:
        raise ValidationError(errors)


def callback_setting_set(
    *,
    agent_name: str,
    callback_name: str,
    enabled: bool,
    session_id: str | None = None,
    actor: Actor,
    reason: str = "",
) -> CallbackSetting:
    """Switch ``callback_name`` of ``agent_name`` on or off, for one session or (``None``)
    every session: insert or update the one row of that scope.

    A change writes one ``callback_setting.set`` audit row in the same transaction and, once
    it commits, is announced to every process's listener (``controls.announce``: running agents
    see it at their next callback point); setting the value it already has writes nothing.
    Raises ``ValidationError`` for a blank or overlong name, one that cannot be stored, or an
    unknown session.
    """
    _scope_check(agent_name=agent_name, callback_name=callback_name, session_id=session_id)
    scope = _Scope(agent_name=agent_name, callback_name=callback_name, session_id=session_id)
    with transaction.atomic():
        setting = CallbackSetting.objects.select_for_update().filter(**scope).first()
        before = _setting_snapshot(setting)
        if setting is None:
            try:
                with transaction.atomic():
                    setting = CallbackSetting.objects.create(**scope, enabled=enabled)
            except IntegrityError:  # created concurrently: update that one
                setting = CallbackSetting.objects.select_for_update().get(**scope)
                before = _setting_snapshot(setting)
        if before is not None:
            if setting.enabled == enabled:
                return setting
            setting.enabled = enabled
            setting.save(update_fields=["enabled", "updated_at"])
        audit_record(
            actor=actor,
            action="callback_setting.set",
            target_type=CALLBACK_SETTING_TARGET,
            target_id=callback_setting_target(**scope),
            before=before,
            after=_setting_snapshot(setting),
            reason=reason,
        )
        switch_announce_on_commit(**scope)
    return setting


def callback_setting_clear(
    *,
    agent_name: str,
    callback_name: str,
    session_id: str | None = None,
    actor: Actor,
    reason: str = "",
) -> bool:
    """Remove the switch of that exact scope, so a wider one (or the default, on) applies.

    Returns whether there was one; if so, one ``callback_setting.clear`` audit row is written
    in the same transaction and the change is announced once it commits.
    """
    scope = _Scope(agent_name=agent_name, callback_name=callback_name, session_id=session_id)
    with transaction.atomic():
        setting = CallbackSetting.objects.select_for_update().filter(**scope).first()
        if setting is None:
            return False
        before = _setting_snapshot(setting)
        setting.delete()
        audit_record(
            actor=actor,
            action="callback_setting.clear",
            target_type=CALLBACK_SETTING_TARGET,
            target_id=callback_setting_target(**scope),
            before=before,
            reason=reason,
        )
        switch_announce_on_commit(**scope)
    return True


RATE_WINDOWS_KEPT_S = 86_400
"""Windows older than this are deleted as new ones are counted (the longest window a
``rate_limit`` policy allows)."""


def rate_window_hit(*, key: str, limit: int, window_s: int, now: float) -> float | None:
    """Count one call under ``key`` in the fixed window holding ``now``: ``None`` when it is
    one of the first ``limit`` calls of that window, else the seconds until the next window
    (the call not counted). Atomic across workers: a conditional ``UPDATE`` on one row."""
    # The window's length is part of the key: a policy edited to another window starts over.
    named = f"{window_s}\x1f{key}"
    digest = hashlib.sha256(named.encode("utf-8", "surrogatepass")).hexdigest()
    start = int(now // window_s) * window_s
    with transaction.atomic():
        _, opened = RateWindow.objects.get_or_create(key=digest, window_start=start)
        counted = RateWindow.objects.filter(key=digest, window_start=start, count__lt=limit).update(
            count=F("count") + 1
        )
        if opened:  # once per key and window: every key's windows past any policy's length
            RateWindow.objects.filter(window_start__lt=int(now) - RATE_WINDOWS_KEPT_S).delete()
    return None if counted else max(start + window_s - now, 0.0)
