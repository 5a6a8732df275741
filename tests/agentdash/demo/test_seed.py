"""``manage.py seed_demo``: demo accounts, the data agent's policy, the agent mirror."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.core.management.base import CommandError

from agentdash.controls.models import Policy
from agentdash.core.permissions import OPERATOR_PERMISSIONS, OPERATORS_GROUP, is_operator
from agentdash.demo.policies import DEFAULT_QUERY_POLICY
from agentdash.demo.seed import DATA_AGENT_POLICY, DEFAULT_DEMO_PASSWORD
from agentdash.registry.models import AgentRecord

pytestmark = pytest.mark.django_db

ACCOUNTS = {"alice", "bob", "operator", "admin"}


@pytest.fixture(autouse=True)
def debug_on(settings) -> None:  # type: ignore[no-untyped-def]
    settings.DEBUG = True
    settings.AGENTDASH = {**settings.AGENTDASH, "DEMO_PASSWORD": ""}


def seed() -> str:
    out = StringIO()
    call_command("seed_demo", stdout=out)
    return out.getvalue()


def test_it_creates_the_accounts_with_the_right_permissions() -> None:
    seed()
    users = {u.username: u for u in User.objects.filter(username__in=ACCOUNTS)}
    assert set(users) == ACCOUNTS
    assert all(u.check_password(DEFAULT_DEMO_PASSWORD) for u in users.values())
    assert [g.name for g in users["operator"].groups.all()] == [OPERATORS_GROUP]
    # Staff, not superuser: the admin lets the operator in, the group's permissions decide.
    assert is_operator(users["operator"]) and users["operator"].is_staff
    assert not users["operator"].is_superuser
    assert all(users["operator"].has_perm(p) for p in OPERATOR_PERMISSIONS)
    for name in ("alice", "bob"):
        assert not is_operator(users[name])
        assert not users[name].is_staff and not users[name].groups.exists()
    assert users["admin"].is_superuser and users["admin"].is_staff
    group = Group.objects.get(name=OPERATORS_GROUP)
    assert group.permissions.count() == len(OPERATOR_PERMISSIONS)


def test_it_prints_the_default_password() -> None:
    out = seed()
    assert f"Password for every demo account: {DEFAULT_DEMO_PASSWORD}" in out
    assert "Created: alice, bob, operator, admin" in out


def test_a_configured_password_is_used_and_not_printed(settings) -> None:  # type: ignore[no-untyped-def]
    settings.AGENTDASH = {**settings.AGENTDASH, "DEMO_PASSWORD": "s3cret-from-env"}
    out = seed()
    assert "s3cret-from-env" not in out and DEFAULT_DEMO_PASSWORD not in out
    assert "AGENTDASH_DEMO_PASSWORD" in out
    assert User.objects.get(username="alice").check_password("s3cret-from-env")


def test_it_is_idempotent() -> None:
    seed()
    snapshot = sorted(
        User.objects.filter(username__in=ACCOUNTS).values_list(
            "id", "username", "is_staff", "is_superuser", "is_active"
        )
    )
    policy = Policy.objects.get(name=DATA_AGENT_POLICY)
    policy.config = {"select_only": True, "tables": ["customers"]}  # an operator's edit
    policy.save()
    out = seed()
    assert "Updated: alice, bob, operator, admin" in out
    assert (
        sorted(
            User.objects.filter(username__in=ACCOUNTS).values_list(
                "id", "username", "is_staff", "is_superuser", "is_active"
            )
        )
        == snapshot
    )
    assert Group.objects.filter(name=OPERATORS_GROUP).count() == 1
    assert User.objects.get(username="operator").groups.count() == 1
    assert Policy.objects.filter(name=DATA_AGENT_POLICY).count() == 1
    assert Policy.objects.get(name=DATA_AGENT_POLICY).config["tables"] == ["customers"]


def test_it_seeds_the_data_agent_policy_and_mirrors_agents() -> None:
    AgentRecord.objects.all().delete()
    out = seed()
    assert "Created the data agent's default query policy." in out
    policy = Policy.objects.get(name=DATA_AGENT_POLICY)
    assert (policy.kind, policy.agents) == ("query", ["data_agent"])
    assert {k: v for k, v in policy.config.items() if v is not None} == DEFAULT_QUERY_POLICY
    assert set(AgentRecord.objects.values_list("name", flat=True)) == {
        "capital_agent",
        "support_desk",
        "data_agent",
        "analyst",
    }


def test_it_refuses_to_run_with_debug_off(settings) -> None:  # type: ignore[no-untyped-def]
    settings.DEBUG = False
    with pytest.raises(CommandError, match="only runs with DEBUG on"):
        seed()
    assert not User.objects.filter(username__in=ACCOUNTS).exists()


def test_the_seeded_policy_is_valid_for_the_controls_app() -> None:
    policies = pytest.importorskip("agentdash.controls.policies")
    cleaned = policies.policy_validate(kind="query", config=DEFAULT_QUERY_POLICY)
    assert cleaned["tables"] == DEFAULT_QUERY_POLICY["tables"]
