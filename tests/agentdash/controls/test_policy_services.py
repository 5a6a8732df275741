"""Policy writes: validated, versioned with a compare-and-swap, audited in one transaction."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError

from agentdash.controls import services
from agentdash.controls.models import Policy
from agentdash.controls.selectors import (
    config_diff,
    policy_config_changes,
    policy_for,
    policy_previous_config,
)
from agentdash.controls.services import PolicyVersionConflict, policy_create, policy_update
from agentdash.core.models import AuditEntry

pytestmark = pytest.mark.django_db


def test_create_is_audited(superuser: User) -> None:
    policy = policy_create(
        name="p", kind="step_limits", config={"max_model_calls": 3, "max_tool_calls": 4},
        agents=["a", "a", " b "], actor=superuser, reason="new",
    )  # fmt: skip
    assert (policy.version, policy.agents) == (1, ["a", "b"])
    entry = AuditEntry.objects.get()
    assert (entry.action, entry.actor, entry.reason, entry.before) == (
        "policy.create", superuser, "new", None,
    )  # fmt: skip
    assert entry.after["config"] == {"max_model_calls": 3, "max_tool_calls": 4}


def test_update_bumps_the_version_and_records_before_and_after(
    query_policy: Policy, superuser: User
) -> None:
    AuditEntry.objects.all().delete()
    updated = policy_update(
        policy=query_policy, config={"tables": ["orders", "customers"]}, enabled=True,
        agents=["data_agent"], actor=superuser, reason="customers too", expected_version=1,
    )  # fmt: skip
    assert updated.version == 2
    stored = Policy.objects.get(pk=query_policy.pk)
    assert stored.version == 2
    assert stored.config == {
        "select_only": True,
        "tables": ["orders", "customers"],
        "max_rows": None,
    }
    entry = AuditEntry.objects.get()
    assert entry.action == "policy.update"
    assert entry.actor_label == "admin" and entry.reason == "customers too"
    assert entry.target_type == "controls.policy" and entry.target_id == str(query_policy.pk)
    assert entry.before["version"] == 1 and entry.before["config"]["tables"] == ["orders"]
    assert entry.after["version"] == 2 and entry.after["config"] == stored.config


def test_stale_version_is_a_conflict_and_writes_nothing(query_policy: Policy) -> None:
    policy_update(
        policy=query_policy, config={"tables": ["a"]}, enabled=True, agents=[], actor=None,
        expected_version=1,
    )  # fmt: skip
    before = AuditEntry.objects.count()
    with pytest.raises(PolicyVersionConflict, match="changed by someone else") as caught:
        policy_update(
            policy=query_policy, config={"tables": ["b"]}, enabled=True, agents=[], actor=None,
            expected_version=1,
        )  # fmt: skip
    assert (caught.value.expected_version, caught.value.current_version) == (1, 2)
    stored = Policy.objects.get(pk=query_policy.pk)
    assert stored.config["tables"] == ["a"] and stored.version == 2
    assert AuditEntry.objects.count() == before


def test_invalid_config_writes_nothing(query_policy: Policy) -> None:
    before = AuditEntry.objects.count()
    with pytest.raises(ValidationError) as caught:
        policy_update(
            policy=query_policy, config={"tables": "a"}, enabled=True, agents=[], actor=None,
            expected_version=1,
        )  # fmt: skip
    assert "config.tables" in caught.value.message_dict
    assert Policy.objects.get(pk=query_policy.pk).version == 1
    assert AuditEntry.objects.count() == before


def test_an_edit_that_changes_nothing_writes_nothing(query_policy: Policy) -> None:
    before = AuditEntry.objects.count()
    same = policy_update(
        policy=query_policy, config=query_policy.config, enabled=True, agents=["data_agent"],
        actor=None, expected_version=1,
    )  # fmt: skip
    assert same.version == 1 and AuditEntry.objects.count() == before


def test_change_and_audit_row_commit_together(
    query_policy: Policy, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(**kwargs: object) -> None:
        raise RuntimeError("audit store down")

    monkeypatch.setattr(services, "audit_record", broken)
    with pytest.raises(RuntimeError):
        policy_update(
            policy=query_policy, config={"tables": ["x"]}, enabled=False, agents=[], actor=None,
            expected_version=1,
        )  # fmt: skip
    stored = Policy.objects.get(pk=query_policy.pk)
    assert (stored.version, stored.enabled, stored.config["tables"]) == (1, True, ["orders"])


def test_policy_for_finds_the_enabled_policy_attached_to_the_agent(query_policy: Policy) -> None:
    assert policy_for(agent_name="data_agent", kind="query") == query_policy
    assert policy_for(agent_name="data_agent", kind="rate_limit") is None
    assert policy_for(agent_name="other", kind="query") is None
    policy_update(
        policy=query_policy, config=query_policy.config, enabled=False, agents=["data_agent"],
        actor=None, expected_version=1,
    )  # fmt: skip
    assert policy_for(agent_name="data_agent", kind="query") is None


def test_previous_config_comes_from_the_audit_trail(query_policy: Policy) -> None:
    assert policy_previous_config(policy=query_policy) is None
    updated = policy_update(
        policy=query_policy, config={"tables": ["orders"], "select_only": False}, enabled=True,
        agents=["data_agent"], actor=None, expected_version=1,
    )  # fmt: skip
    assert policy_previous_config(policy=updated) == query_policy.config
    changes = policy_config_changes(policy=updated)
    assert [(c.key, c.before, c.after) for c in changes] == [
        ("max_rows", "50", "null"),
        ("select_only", "true", "false"),
    ]


def test_config_diff_flattens_nested_keys() -> None:
    changes = config_diff(
        before={"tools": {"t": {"patterns": {"q": "a"}}}, "gone": 1},
        after={"tools": {"t": {"patterns": {"q": "b"}, "max_length": {"q": 3}}}},
    )
    assert [(c.key, c.change, c.before, c.after) for c in changes] == [
        ("gone", "removed", "1", None),
        ("tools.t.max_length.q", "added", None, "3"),
        ("tools.t.patterns.q", "changed", '"a"', '"b"'),
    ]
    assert config_diff(before={}, after={}) == []
    assert config_diff(before={"a": 1}, after={"a": True})[0].change == "changed"
