"""A session's callback switches carried to another session (a fork), and the overrides a
person asks for, in the shape a form or a client sends them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from agentdash.controls.announce import switch_announce_on_commit
from agentdash.controls.models import CALLBACK_SETTING_TARGET, CallbackSetting
from agentdash.controls.services import Actor, callback_setting_set
from agentdash.core.hygiene import text_problem
from agentdash.core.services import audit_record

SWITCHES_MAX = 200


@dataclass(frozen=True)
class SwitchOverride:
    """One callback of one agent switched on or off."""

    agent: str
    name: str
    enabled: bool


def switch_overrides_clean(value: Any) -> list[SwitchOverride]:
    """Overrides as sent: a JSON list of ``{"agent": …, "name": …, "enabled": true|false}``
    (the shape of the session page's ``callbacks``). Raises ``ValidationError`` (key
    ``switches``) for anything else; the last of two overrides of one callback wins."""
    if not isinstance(value, list):
        raise ValidationError(
            {"switches": ['must be a JSON list of {"agent", "name", "enabled"} objects']}
        )
    if len(value) > SWITCHES_MAX:
        raise ValidationError({"switches": [f"at most {SWITCHES_MAX} switches"]})
    found: dict[tuple[str, str], SwitchOverride] = {}
    for item in value:
        if not isinstance(item, dict) or set(item) - {"agent", "name", "enabled"}:
            raise ValidationError(
                {"switches": ['each switch is an object with "agent", "name" and "enabled"']}
            )
        agent, name, enabled = item.get("agent"), item.get("name"), item.get("enabled")
        if not isinstance(agent, str) or not isinstance(name, str) or not agent or not name:
            raise ValidationError({"switches": ['"agent" and "name" must be non-empty text']})
        if not isinstance(enabled, bool):
            raise ValidationError({"switches": ['"enabled" must be true or false']})
        for text in (agent, name):
            if problem := text_problem(text):
                raise ValidationError({"switches": [f"a name {problem}"]})
        found[(agent, name)] = SwitchOverride(agent=agent, name=name, enabled=enabled)
    return list(found.values())


def session_switches_fork(
    *,
    source_id: str,
    target_id: str,
    overrides: list[SwitchOverride] | None = None,
    actor: Actor,
    reason: str = "",
) -> dict[tuple[str, str], bool]:
    """Give session ``target_id`` the switches set for session ``source_id`` (one
    ``callback_setting.copy`` audit row when there are any), then apply ``overrides``
    (``callback_setting_set``: audited one by one), in one transaction; each new switch is
    announced to the running agents once it commits. Returns the target's session switches,
    ``{(agent, callback): enabled}``. Who may do it is the caller's question."""
    with transaction.atomic():
        copied = list(
            CallbackSetting.objects.filter(session_id=source_id).order_by(
                "agent_name", "callback_name"
            )
        )
        CallbackSetting.objects.bulk_create(
            [
                CallbackSetting(
                    agent_name=row.agent_name,
                    callback_name=row.callback_name,
                    session_id=target_id,
                    enabled=row.enabled,
                )
                for row in copied
            ]
        )
        for row in copied:
            switch_announce_on_commit(
                agent_name=row.agent_name, callback_name=row.callback_name, session_id=target_id
            )
        if copied:
            audit_record(
                actor=actor,
                action="callback_setting.copy",
                target_type=CALLBACK_SETTING_TARGET,
                target_id=f"@{target_id}",
                before={"session_id": source_id},
                after={
                    "session_id": target_id,
                    "switches": [[r.agent_name, r.callback_name, r.enabled] for r in copied],
                },
                reason=reason,
            )
        for override in overrides or []:
            callback_setting_set(
                agent_name=override.agent,
                callback_name=override.name,
                enabled=override.enabled,
                session_id=target_id,
                actor=actor,
                reason=reason,
            )
        rows = CallbackSetting.objects.filter(session_id=target_id)
        return {(r.agent_name, r.callback_name): r.enabled for r in rows}
