"""Callback switches: upserted and audited by the services, toggled from the admin."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from asgiref.sync import async_to_sync
from channels.layers import channel_layers
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from agentdash.agent_sessions.models import AgentSession
from agentdash.controls.models import CallbackSetting
from agentdash.controls.selectors import callback_settings_snapshot
from agentdash.controls.services import callback_setting_clear, callback_setting_set
from agentdash.core.models import AuditEntry
from agentdash.registry.models import AgentRecord

pytestmark = pytest.mark.django_db


def test_set_inserts_then_updates_one_row_per_scope(
    superuser: User, make_session: Callable[[str], AgentSession]
) -> None:
    make_session("s1")
    callback_setting_set(agent_name="a", callback_name="guard", enabled=False, actor=superuser)
    callback_setting_set(
        agent_name="a", callback_name="guard", enabled=True, session_id="s1", actor=superuser
    )
    callback_setting_set(
        agent_name="a", callback_name="guard", enabled=True, actor=superuser, reason="back on"
    )
    assert CallbackSetting.objects.count() == 2
    assert callback_settings_snapshot() == {("guard", "a", None): True, ("guard", "a", "s1"): True}
    entries = list(AuditEntry.objects.order_by("id"))
    assert [(e.action, e.target_id) for e in entries] == [
        ("callback_setting.set", "a:guard"),
        ("callback_setting.set", "a:guard@s1"),
        ("callback_setting.set", "a:guard"),
    ]
    assert entries[0].before is None and entries[0].after["enabled"] is False
    assert entries[2].before["enabled"] is False and entries[2].after["enabled"] is True
    assert entries[2].reason == "back on" and entries[2].actor == superuser


def test_setting_the_same_value_writes_nothing(superuser: User) -> None:
    callback_setting_set(agent_name="a", callback_name="g", enabled=False, actor=superuser)
    callback_setting_set(agent_name="a", callback_name="g", enabled=False, actor=superuser)
    assert AuditEntry.objects.count() == 1


def test_clear_removes_the_scope_and_is_audited(superuser: User) -> None:
    callback_setting_set(agent_name="a", callback_name="g", enabled=False, actor=superuser)
    assert callback_setting_clear(agent_name="a", callback_name="g", actor=superuser, reason="r")
    assert not callback_setting_clear(agent_name="a", callback_name="g", actor=superuser)
    assert callback_settings_snapshot() == {}
    entry = AuditEntry.objects.order_by("-id").first()
    assert (entry.action, entry.after, entry.before["enabled"]) == (
        "callback_setting.clear",
        None,
        False,
    )
    assert AuditEntry.objects.count() == 2


def test_bad_scope_is_refused_before_writing(superuser: User) -> None:
    with pytest.raises(ValidationError) as caught:
        callback_setting_set(
            agent_name=" ", callback_name="g", enabled=False, session_id="nope", actor=superuser
        )
    assert set(caught.value.message_dict) == {"agent_name", "session"}
    assert not CallbackSetting.objects.exists() and not AuditEntry.objects.exists()


@pytest.mark.parametrize(
    ("agent", "callback", "field", "says"),
    [
        ("a\x00", "g", "agent_name", "NUL character"),
        ("a", "g\ud800", "callback_name", "unpaired surrogate"),
        ("a" * 129, "g", "agent_name", "At most 128"),
        ("a", "g" * 256, "callback_name", "At most 255"),
    ],
)
def test_names_that_cannot_be_stored_are_refused(
    superuser: User, agent: str, callback: str, field: str, says: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        callback_setting_set(
            agent_name=agent, callback_name=callback, enabled=False, actor=superuser
        )
    assert says in caught.value.message_dict[field][0]
    assert not CallbackSetting.objects.exists() and not AuditEntry.objects.exists()


def test_the_longest_names_fit_the_audit_trail(
    superuser: User, make_session: Callable[[str], AgentSession]
) -> None:
    session = make_session("s" * 128)
    callback_setting_set(
        agent_name="a" * 128, callback_name="g" * 255, enabled=False, session_id=session.id,
        actor=superuser,
    )  # fmt: skip
    (entry,) = AuditEntry.objects.all()
    assert entry.target_id == f"{'a' * 128}:{'g' * 255}@{'s' * 128}"


def changelist_action(
    client: Client, action: str, settings: list[CallbackSetting], reason: str
) -> None:
    response = client.post(
        reverse("admin:controls_callbacksetting_changelist"),
        {
            "action": action,
            "_selected_action": [str(s.pk) for s in settings],
            "reason": reason,
            "index": "0",
        },
        follow=True,
    )
    assert response.status_code == 200


@pytest.mark.parametrize("who", ["superuser", "staff_operator"])
def test_admin_switch_actions_go_through_the_service(
    who: str, request: pytest.FixtureRequest
) -> None:
    user = request.getfixturevalue(who)
    one = callback_setting_set(agent_name="a", callback_name="g1", enabled=True, actor=None)
    two = callback_setting_set(agent_name="b", callback_name="g2", enabled=False, actor=None)
    AuditEntry.objects.all().delete()
    client = Client()
    client.force_login(user)

    changelist_action(client, "switch_off", [one, two], "incident 42")
    assert callback_settings_snapshot() == {("g1", "a", None): False, ("g2", "b", None): False}
    entry = AuditEntry.objects.get()  # two was off already: one change, one row
    assert (entry.action, entry.actor) == ("callback_setting.set", user)
    assert (entry.target_id, entry.reason) == ("a:g1", "incident 42")

    changelist_action(client, "switch_on", [one, two], "")
    assert set(callback_settings_snapshot().values()) == {True}
    assert AuditEntry.objects.count() == 3


@pytest.mark.django_db(transaction=True)  # announced when the transaction commits
def test_switches_changed_in_the_admin_reach_the_listeners(
    staff_operator: User, superuser: User
) -> None:
    layer = channel_layers["default"]
    listener = async_to_sync(layer.new_channel)("controls.")
    async_to_sync(layer.group_add)("controls", listener)
    setting = callback_setting_set(agent_name="a", callback_name="g1", enabled=True, actor=None)
    assert async_to_sync(layer.receive)(listener)["change"]["enabled"] is True
    client = Client()
    client.force_login(staff_operator)

    changelist_action(client, "switch_off", [setting], "incident 42")
    heard = async_to_sync(layer.receive)(listener)
    assert heard["type"] == "callback.changed"
    assert heard["change"] == {
        "agent_name": "a",
        "callback_name": "g1",
        "session_id": None,
        "enabled": False,
    }
    client.force_login(superuser)  # operators may not delete switches
    delete = reverse("admin:controls_callbacksetting_delete", args=[setting.pk])
    assert client.post(delete, {"post": "yes"}).status_code == 302
    assert async_to_sync(layer.receive)(listener)["change"]["enabled"] is None  # cleared


def test_admin_add_and_edit_are_audited(superuser: User) -> None:
    client = Client()
    client.force_login(superuser)
    response = client.post(
        reverse("admin:controls_callbacksetting_add"),
        {"agent_name": "a", "callback_name": "g", "session": "", "reason": "try", "_save": "Save"},
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    setting = CallbackSetting.objects.get()
    assert setting.enabled is False  # unticked checkbox
    response = client.post(
        reverse("admin:controls_callbacksetting_change", args=[setting.pk]),
        {"enabled": "on", "reason": "done", "_save": "Save"},
    )
    assert response.status_code == 302
    assert CallbackSetting.objects.get().enabled is True
    assert [e.reason for e in AuditEntry.objects.order_by("id")] == ["try", "done"]


def test_add_form_offers_registry_names_and_falls_back_to_text(superuser: User) -> None:
    client = Client()
    client.force_login(superuser)
    url = reverse("admin:controls_callbacksetting_add")
    page = client.get(url).content.decode()
    assert 'name="callback_name"' in page and 'type="text"' in page
    assert '<option value="gen_ai.content_capture">' in page
    assert '<option value="pii_filter">' not in page

    AgentRecord.objects.create(
        name="support",
        dotted_path="x:y",
        callbacks=[
            {"agent": "support", "slot": "before_model_callback", "name": "pii_filter"},
            {"agent": "billing", "slot": "after_tool_callback", "name": "<i>odd</i>"},
        ],
    )
    page = client.get(url).content.decode()
    assert '<option value="pii_filter">' in page
    assert '<option value="billing">' in page
    assert '<option value="&lt;i&gt;odd&lt;/i&gt;">' in page
    assert 'list="id_callback_name_options"' in page
