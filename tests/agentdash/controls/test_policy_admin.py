"""Editing policies in the admin: validated per field, version-checked, audited once, and the
change page shows what the last edit changed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agentdash.controls.models import Policy
from agentdash.controls.services import policy_update
from agentdash.core.models import AuditEntry

pytestmark = pytest.mark.django_db


@pytest.fixture(params=["superuser", "staff_operator"])
def editor(request: pytest.FixtureRequest) -> User:
    """Both an admin and an operator (staff, in the Operators group) may edit policies."""
    return request.getfixturevalue(request.param)


def client_for(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def change_url(policy: Policy) -> str:
    return reverse("admin:controls_policy_change", args=[policy.pk])


def form_data(policy: Policy, config: Any, **extra: str) -> dict[str, str]:
    return {
        "config": config if isinstance(config, str) else json.dumps(config),
        "agents_text": ", ".join(policy.agents),
        "enabled": "on",
        "reason": "",
        "loaded_version": str(policy.version),
        "_save": "Save",
        **extra,
    }


def test_edit_is_saved_through_the_service_with_one_audit_row_and_a_diff(
    editor: User, query_policy: Policy
) -> None:
    client = client_for(editor)
    page = client.get(change_url(query_policy))
    assert page.status_code == 200
    assert 'name="loaded_version" value="1"' in page.content.decode()
    AuditEntry.objects.all().delete()

    new_config = {"tables": ["orders", "<b>evil</b>"], "max_rows": 50}
    response = client.post(
        change_url(query_policy), form_data(query_policy, new_config, reason="widen")
    )
    assert response.status_code == 200  # re-shown: "<b>evil</b>" is no table name
    assert "tables[1]: &#x27;&lt;b&gt;evil&lt;/b&gt;&#x27; is not a table name" in (
        response.content.decode()
    )
    assert AuditEntry.objects.count() == 0

    new_config = {"tables": ["orders", "customers"], "max_rows": 10}
    response = client.post(
        change_url(query_policy), form_data(query_policy, new_config, reason="widen")
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    stored = Policy.objects.get(pk=query_policy.pk)
    assert stored.version == 2 and stored.config["tables"] == ["orders", "customers"]
    entry = AuditEntry.objects.get()
    assert (entry.action, entry.actor, entry.reason) == ("policy.update", editor, "widen")
    assert entry.before["config"]["max_rows"] == 50 and entry.after["config"]["max_rows"] == 10

    page = client.get(change_url(stored)).content.decode()
    assert 'class="policy-diff"' in page
    assert "<td><code>max_rows</code></td><td>changed</td><td><code>50</code></td>" in page
    assert "<code>10</code>" in page
    assert "&quot;customers&quot;" in page  # tables list, as escaped JSON


def test_diff_escapes_config_values(superuser: User) -> None:
    from agentdash.controls.services import policy_create

    policy = policy_create(
        name="guard",
        kind="tool_guard",
        config={"tools": {"t": {"patterns": {"q": "a"}}}},
        actor=None,
    )
    policy_update(
        policy=policy,
        config={"tools": {"t": {"patterns": {"q": "<script>alert(1)</script>"}}}},
        enabled=True,
        agents=[],
        actor=superuser,
        expected_version=1,
    )
    page = client_for(superuser).get(change_url(policy)).content.decode()
    diff = page[page.index('class="policy-diff"') :]
    assert "<script>alert(1)</script>" not in diff
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in diff
    assert "tools.t.patterns.q" in diff


def test_invalid_config_is_shown_per_field(superuser: User, query_policy: Policy) -> None:
    response = client_for(superuser).post(
        change_url(query_policy),
        form_data(query_policy, {"tables": ["a b"], "max_rows": 0, "limit": 1}),
    )
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors["config"]
    assert "tables[0]: 'a b' is not a table name" in " ".join(errors)
    assert "max_rows: must be at least 1." in errors
    assert any(e.startswith("limit: Unknown key") for e in errors)
    assert Policy.objects.get(pk=query_policy.pk).version == 1


def test_bad_json_is_an_error_and_the_text_is_kept(superuser: User, query_policy: Policy) -> None:
    before = AuditEntry.objects.count()
    text = '{"tables": ["orders",], "max_rows": 5'
    response = client_for(superuser).post(change_url(query_policy), form_data(query_policy, text))
    assert response.status_code == 200
    form = response.context["adminform"].form
    assert "Enter a valid JSON." in form.errors["config"]
    page = response.content.decode()
    assert "{&quot;tables&quot;: [&quot;orders&quot;,], &quot;max_rows&quot;: 5" in page
    assert AuditEntry.objects.count() == before
    assert Policy.objects.get(pk=query_policy.pk).version == 1


def test_concurrent_edit_is_a_form_error_and_nothing_is_lost(
    staff_operator: User, superuser: User, query_policy: Policy
) -> None:
    client = client_for(staff_operator)
    client.get(change_url(query_policy))  # the operator opens the form at version 1
    policy_update(  # meanwhile an admin saves
        policy=query_policy, config={"tables": ["audit"]}, enabled=True,
        agents=["data_agent"], actor=superuser, expected_version=1,
    )  # fmt: skip
    mine = '{"tables": ["orders", "mine"]}'
    response = client.post(change_url(query_policy), form_data(query_policy, mine))
    assert response.status_code == 200
    form = response.context["adminform"].form
    assert any("changed by someone else" in e for e in form.non_field_errors())
    assert "&quot;mine&quot;" in response.content.decode()  # the operator's text is still there
    stored = Policy.objects.get(pk=query_policy.pk)
    assert stored.version == 2 and stored.config["tables"] == ["audit"]
    assert AuditEntry.objects.filter(action="policy.update").count() == 1


def test_add_goes_through_the_service(staff_operator: User) -> None:
    response = client_for(staff_operator).post(
        reverse("admin:controls_policy_add"),
        {
            "name": "limits",
            "kind": "step_limits",
            "config": '{"max_model_calls": 5, "max_tool_calls": 9}',
            "agents_text": "a b",
            "enabled": "on",
            "reason": "start small",
            "_save": "Save",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    policy = Policy.objects.get(name="limits")
    assert (policy.agents, policy.version) == (["a", "b"], 1)
    entry = AuditEntry.objects.get()
    assert (entry.action, entry.reason, entry.actor) == (
        "policy.create",
        "start small",
        staff_operator,
    )


def test_add_with_unknown_kind_is_a_kind_error(superuser: User) -> None:
    response = client_for(superuser).post(
        reverse("admin:controls_policy_add"),
        {"name": "x", "kind": "nope", "config": "{}", "agents_text": "", "_save": "Save"},
    )
    assert response.status_code == 200
    assert "kind" in response.context["adminform"].form.errors
    assert not Policy.objects.exists()


@pytest.mark.parametrize(
    ("config", "said"),
    [
        ("[" * 1000 + "]" * 1000, "nested deeper than 64 levels"),
        ('{"tables": ["\\u0000"]}', "contains a NUL character"),
        ('{"tables": ["orders"], "max_rows": 1e999}', "not finite"),
    ],
    ids=["1,000 deep", "escaped NUL", "infinite"],
)
def test_config_no_database_stores_is_a_form_error(
    editor: User, query_policy: Policy, config: str, said: str
) -> None:
    response = client_for(editor).post(change_url(query_policy), form_data(query_policy, config))
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors["config"]
    assert any(said in error for error in errors), errors
    assert Policy.objects.get(pk=query_policy.pk).version == query_policy.version


def test_the_service_refuses_a_config_too_deep_whoever_calls_it(query_policy: Policy) -> None:
    from django.core.exceptions import ValidationError

    deep: Any = []
    for _ in range(5000):  # deeper than Python could parse or print
        deep = [deep]
    with pytest.raises(ValidationError) as refused:
        policy_update(
            policy=query_policy, config={"tables": deep}, enabled=True, agents=[], actor=None,
            expected_version=query_policy.version,
        )  # fmt: skip
    assert "nested deeper than 64 levels" in str(refused.value.message_dict["config"])
