"""Reads of the controls app: which policy governs an agent, what switches are set, what a
policy edit changed."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.db.models import QuerySet

from agentdash.controls.models import POLICY_TARGET, Breakpoint, CallbackSetting, Policy
from agentdash.core.models import AuditEntry
from runtime.telemetry.attributes import CONTENT_CAPTURE

SettingKey = tuple[str, str, str | None]
"""``(callback_name, agent_name, session_id or None)``."""

_MISSING = object()


def callback_settings_snapshot() -> dict[SettingKey, bool]:
    """Every callback switch as ``{(callback_name, agent_name, session_id | None): enabled}``."""
    rows = CallbackSetting.objects.values_list(
        "callback_name", "agent_name", "session_id", "enabled"
    )
    return {(callback, agent, session): enabled for callback, agent, session, enabled in rows}


def callback_settings_list() -> QuerySet[CallbackSetting]:
    return CallbackSetting.objects.order_by("agent_name", "callback_name", "session_id")


def policies_for_agent(*, agent_name: str) -> list[Policy]:
    """The enabled policies attached to ``agent_name``, by name."""
    # JSONField ``contains`` is not supported on SQLite: filter the (few) policies here.
    return [
        policy
        for policy in Policy.objects.filter(enabled=True).order_by("name")
        if agent_name in policy.agents
    ]


def policy_for(*, agent_name: str, kind: str) -> Policy | None:
    """The enabled ``kind`` policy attached to ``agent_name``; with several, the first by
    name; ``None`` when there is none."""
    for policy in policies_for_agent(agent_name=agent_name):
        if policy.kind == kind:
            return policy
    return None


def policy_history(*, policy: Policy) -> QuerySet[AuditEntry]:
    """The policy's audit rows, newest first."""
    return AuditEntry.objects.filter(target_type=POLICY_TARGET, target_id=str(policy.pk))


def policy_previous_config(*, policy: Policy) -> dict[str, Any] | None:
    """The config the policy had before its current version, from the audit trail; ``None``
    for a first version or when the trail has no record of the edit."""
    entry = policy_history(policy=policy).filter(action="policy.update").first()
    if entry is None or not isinstance(entry.after, dict) or not isinstance(entry.before, dict):
        return None
    if entry.after.get("version") != policy.version:
        return None
    config = entry.before.get("config")
    return config if isinstance(config, dict) else None


@dataclass(frozen=True)
class ConfigChange:
    """One key that differs between two configs; values as compact JSON, ``None`` when the
    key is absent on that side."""

    key: str
    before: str | None
    after: str | None

    @property
    def change(self) -> str:
        if self.before is None:
            return "added"
        if self.after is None:
            return "removed"
        return "changed"


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> dict[str, Any]:
    if isinstance(value, dict) and (value or not prefix):
        for key, item in value.items():
            _flatten(item, f"{prefix}.{key}" if prefix else str(key), out)
    else:
        out[prefix] = value
    return out


def _json(value: Any) -> str | None:
    if value is _MISSING:
        return None
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def config_diff(*, before: dict[str, Any], after: dict[str, Any]) -> list[ConfigChange]:
    """Per-key differences, nested objects flattened to dotted keys (``tools.search.patterns.q``),
    sorted by key. Lists compare whole."""
    old, new = _flatten(before, "", {}), _flatten(after, "", {})
    changes = []
    for key in sorted(old.keys() | new.keys()):
        a, b = old.get(key, _MISSING), new.get(key, _MISSING)
        if a is _MISSING or b is _MISSING or a != b or type(a) is not type(b):
            changes.append(ConfigChange(key=key, before=_json(a), after=_json(b)))
    return changes


def policy_config_changes(*, policy: Policy) -> list[ConfigChange] | None:
    """What the policy's last edit changed in its config; ``None`` when there is no earlier
    version to compare with."""
    previous = policy_previous_config(policy=policy)
    if previous is None:
        return None
    return config_diff(before=previous, after=policy.config)


def policy_current_version(*, policy_id: int, lock: bool = False) -> int | None:
    """The stored version of a policy (``None`` if it is gone). ``lock`` holds the row until
    the surrounding transaction ends (only inside one)."""
    policies = Policy.objects.filter(pk=policy_id)
    if lock:
        policies = policies.select_for_update()
    return policies.values_list("version", flat=True).first()


@dataclass(frozen=True)
class KnownNames:
    """Agent and callback names to offer in forms."""

    agents: list[str]
    callbacks: list[str]


def callback_names_known() -> KnownNames:
    """Names from the agent registry (``AgentRecord.callbacks``: ``[{agent, slot, name}]``),
    plus the built-in content-capture switch. Without the registry app: just that switch."""
    agents: set[str] = set()
    callbacks: set[str] = {CONTENT_CAPTURE}
    try:
        record = apps.get_model("registry", "AgentRecord")
    except LookupError:
        return KnownNames(agents=[], callbacks=sorted(callbacks))
    for name, entries in record.objects.values_list("name", "callbacks"):
        agents.add(name)
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict):
                continue
            if isinstance(entry.get("agent"), str):
                agents.add(entry["agent"])
            if isinstance(entry.get("name"), str):
                callbacks.add(entry["name"])
    return KnownNames(agents=sorted(agents), callbacks=sorted(callbacks))


@dataclass(frozen=True)
class PolicyVersion:
    """One entry of a policy's history: who made which version, why, and what changed."""

    version: int | None
    at: Any
    actor: str
    action: str
    reason: str
    changes: list[ConfigChange]
    """Config keys that differ from the version before (every key of a first version)."""
    enabled: tuple[bool | None, bool | None] | None
    agents: tuple[list[str], list[str]] | None


def _side(snapshot: Any, key: str, default: Any) -> Any:
    return snapshot.get(key, default) if isinstance(snapshot, dict) else default


def policy_versions(*, policy: Policy, limit: int = 50) -> list[PolicyVersion]:
    """The policy's history from its audit trail, newest first: each version with the diff
    of its config against the one before, and its switch and agents when they changed."""
    out = []
    for entry in policy_history(policy=policy)[:limit]:
        before, after = entry.before, entry.after
        config_before = _side(before, "config", {})
        config_after = _side(after, "config", {})
        enabled = (_side(before, "enabled", None), _side(after, "enabled", None))
        agents = (_side(before, "agents", []), _side(after, "agents", []))
        out.append(
            PolicyVersion(
                version=_side(after, "version", None) or _side(before, "version", None),
                at=entry.at,
                actor=entry.actor_label or "(system)",
                action=entry.action.removeprefix("policy."),
                reason=entry.reason,
                changes=config_diff(
                    before=config_before if isinstance(config_before, dict) else {},
                    after=config_after if isinstance(config_after, dict) else {},
                ),
                enabled=enabled if enabled[0] != enabled[1] else None,
                agents=agents if agents[0] != agents[1] else None,
            )
        )
    return out


def policies_governing(*, agent_names: set[str]) -> list[Policy]:
    """Every policy (enabled or not) attached to one of ``agent_names``, by kind and name."""
    return [
        policy
        for policy in Policy.objects.order_by("kind", "name")
        if agent_names & set(policy.agents)
    ]


# ── reads for the pages (dashboard/) ──────────────────────────────────────────────────────
BREAKPOINT_KINDS = Breakpoint.Kind.choices
"""Where a breakpoint can stop a run: (value, label) pairs."""
BREAKPOINT_OUTCOMES: list[str] = list(Breakpoint.Outcome.values)
"""The tool outcomes an ``after_tool`` breakpoint can wait for."""


def breakpoint_find(*, breakpoint_id: int, agent_name: str) -> Breakpoint | None:
    """The agent's breakpoint of that id, or ``None``."""
    return Breakpoint.objects.filter(pk=breakpoint_id, agent_name=agent_name).first()


def policy_find(*, policy_id: int) -> Policy | None:
    """The policy of that id as stored now, or ``None``."""
    return Policy.objects.filter(pk=policy_id).first()
