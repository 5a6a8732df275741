"""The admin: read-only sessions, state edits only through session_state_update."""

from __future__ import annotations

import json
import re
from html import unescape
from typing import Any

import pytest
from django.contrib.admin.utils import quote
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from agentdash.agent_sessions.models import AgentSession, SessionEvent, UserState
from agentdash.agent_sessions.session_service import DjangoSessionService
from agentdash.core.models import AuditEntry
from runtime.events import Event, EventActions

pytestmark = pytest.mark.django_db


@pytest.fixture
def session(service: DjangoSessionService) -> Any:
    return service.create_session(app_name="app", user_id="u", state={"x": 1, "user:tier": "free"})


def state_url(session_id: str) -> str:
    return reverse("admin:agent_sessions_agentsession_state", args=[session_id])


def logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def form(key: str, value: Any, version: int, reason: str = "support ticket 12") -> dict:
    return {
        "key": key,
        "value": json.dumps(value),
        "reason": reason,
        "expected_version": version,
        "expected_app_version": 0,
        "expected_user_version": 1,
    }


def test_change_form_is_read_only_and_links_to_the_state_editor(
    session: Any, operator: Any, viewer: Any
) -> None:
    change = reverse("admin:agent_sessions_agentsession_change", args=[session.id])
    page = logged_in(operator).get(change)
    assert page.status_code == 200
    html = page.content.decode()
    assert 'name="state"' not in html and 'name="version"' not in html
    assert state_url(session.id) in html
    assert state_url(session.id) not in logged_in(viewer).get(change).content.decode()


def test_everything_is_viewable_and_nothing_addable_or_changeable(
    session: Any, operator: Any
) -> None:
    client = logged_in(operator)
    page = client.get(reverse("admin:agent_sessions_agentsession_changelist"))
    assert page.status_code == 200 and session.id in page.content.decode()
    events = client.get(
        reverse("admin:agent_sessions_sessionevent_changelist")
        + f"?session__id__exact={session.id}"
    )
    assert events.status_code == 200
    for model in ("appstate", "userstate", "sessionevent", "agentsession"):
        assert client.get(reverse(f"admin:agent_sessions_{model}_changelist")).status_code == 200
        assert client.get(reverse(f"admin:agent_sessions_{model}_add")).status_code == 403
    row = UserState.objects.get()
    user_state = client.get(
        reverse("admin:agent_sessions_userstate_change", args=[row.pk])
    ).content.decode()
    assert "&quot;user:tier&quot;: &quot;free&quot;" in user_state
    assert 'name="state"' not in user_state
    before = AgentSession.objects.get(pk=session.id).state
    change = reverse("admin:agent_sessions_agentsession_change", args=[session.id])
    assert client.post(change, {"state": '{"x": 666}', "version": 9}).status_code == 403
    assert AgentSession.objects.get(pk=session.id).state == before


def test_edit_writes_one_audited_operator_event(
    session: Any, operator: Any, service: DjangoSessionService
) -> None:
    client = logged_in(operator)
    page = client.get(state_url(session.id))
    assert page.status_code == 200
    assert page.context["form"].initial["expected_version"] == 0

    response = client.post(state_url(session.id), form("x", {"fixed": True}, 0))

    assert response.status_code == 302
    [audit] = AuditEntry.objects.all()
    assert audit.action == "session.state.update" and audit.target_id == session.id
    assert (audit.before, audit.after) == ({"x": 1}, {"x": {"fixed": True}})
    assert (audit.reason, audit.actor) == ("support ticket 12", operator)
    [event] = SessionEvent.objects.filter(session_id=session.id)
    assert event.author == "operator" and event.state_delta_keys == ["x"]
    row = AgentSession.objects.get(pk=session.id)
    assert (row.state, row.version) == ({"x": {"fixed": True}}, 1)


def test_conflict_shows_an_error_keeps_the_input_and_writes_nothing(
    session: Any, operator: Any, service: DjangoSessionService
) -> None:
    client = logged_in(operator)
    client.get(state_url(session.id))  # the operator loads the page at version 0 ...
    service.append_event(  # ... an agent changes the same key ...
        session, Event(author="agent", actions=EventActions(state_delta={"x": 99}))
    )
    response = client.post(state_url(session.id), form("x", "operator value", 0))  # ... submit

    assert response.status_code == 200
    html = response.content.decode()
    assert "Nothing was saved: key &#x27;x&#x27; changed since version 0" in html
    assert "it is now 99 (version 1)" in html
    bound = response.context["form"]
    assert bound["value"].value() == '"operator value"'  # what they typed is still there
    assert bound["reason"].value() == "support ticket 12"
    assert bound["expected_version"].value() == "1"  # resubmitting = deliberate overwrite
    assert not AuditEntry.objects.exists()
    assert not SessionEvent.objects.filter(author="operator").exists()
    assert AgentSession.objects.get(pk=session.id).state == {"x": 99}

    again = client.post(state_url(session.id), form("x", "operator value", 1))
    assert again.status_code == 302
    assert AgentSession.objects.get(pk=session.id).state == {"x": "operator value"}
    assert AuditEntry.objects.count() == 1


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({"value": "{not json"}, "Enter a valid JSON."),
        ({"value": ""}, "Enter a JSON value"),
        ({"reason": "  "}, "This field is required."),
        ({"key": "temp:x"}, "never stored"),
    ],
)
def test_invalid_input_is_shown_and_nothing_written(
    session: Any, operator: Any, data: dict, error: str
) -> None:
    response = logged_in(operator).post(state_url(session.id), {**form("x", 2, 0), **data})
    assert response.status_code == 200
    assert error in response.content.decode()
    assert not AuditEntry.objects.exists() and not SessionEvent.objects.exists()


def test_editing_needs_the_permission(session: Any, viewer: Any) -> None:
    client = logged_in(viewer)
    assert client.get(state_url(session.id)).status_code == 403
    assert client.post(state_url(session.id), form("x", 2, 0)).status_code == 403
    assert not AuditEntry.objects.exists()
    assert AgentSession.objects.get(pk=session.id).state == {"x": 1}


def test_unknown_session_is_404(operator: Any) -> None:
    assert logged_in(operator).get(state_url("missing")).status_code == 404


def test_admin_delete_is_audited(session: Any, django_user_model: Any) -> None:
    admin = django_user_model.objects.create_superuser("root", password="pw")
    delete = reverse("admin:agent_sessions_agentsession_delete", args=[session.id])
    assert logged_in(admin).post(delete, {"post": "yes"}).status_code == 302
    assert not AgentSession.objects.exists()
    [audit] = AuditEntry.objects.all()
    assert audit.action == "session.delete" and audit.before["state"] == {"x": 1}


@pytest.mark.parametrize("session_id", ["run_1", "a:b", "a/b", "x_5F"])
def test_state_edit_and_links_work_whatever_the_admin_quoting_does_to_the_id(
    operator: Any, session_id: str
) -> None:
    # The admin writes ids in URLs with its own quoting (_ → _5F, : → _3A, / → _2F): the
    # state editor and the change page's links must undo it (a/b: a row from before the
    # id alphabet, stored directly).
    AgentSession.objects.create(id=session_id, app_name="app", user_id="u", last_update_time=0)
    client = logged_in(operator)
    change = client.get(
        reverse("admin:agent_sessions_agentsession_change", args=[quote(session_id)])
    )
    assert change.status_code == 200
    links = dict(
        re.findall(r'<li><a href="([^"]+)">(Edit state|Events)</a></li>', change.content.decode())
    )
    state_page = unescape(next(href for href, label in links.items() if label == "Edit state"))
    events_page = unescape(next(href for href, label in links.items() if label == "Events"))
    page = client.get(state_page)
    assert page.status_code == 200 and page.context["original"].pk == session_id
    saved = client.post(state_page, form("k", 1, version=0, reason="quoted ids"))
    assert saved.status_code == 302
    assert client.get(saved["Location"]).context["original"].pk == session_id
    assert AgentSession.objects.get(pk=session_id).state == {"k": 1}
    events = client.get(events_page)
    assert [e.session_id for e in events.context["cl"].result_list] == [session_id]


def test_state_edit_of_an_id_no_row_can_have_is_404(operator: Any) -> None:
    client = logged_in(operator)
    for junk in ("_00", "x" * 200, "nope"):
        assert client.get(state_url(junk)).status_code == 404


@pytest.mark.parametrize(
    "value",
    ["[" * 1000 + "]" * 1000, '{"k": "\\u0000"}', '["\\ud800"]', "1e999", "NaN"],
    ids=["1,000 deep", "escaped NUL", "lone surrogate", "infinite", "NaN"],
)
def test_state_edit_refuses_json_no_database_stores(
    session: Any, operator: Any, value: str
) -> None:
    data = {**form("k", 1, version=1), "value": value}
    page = logged_in(operator).post(state_url(session.id), data)
    assert page.status_code == 200
    assert page.context["form"].errors["value"], page.context["form"].errors
    assert escape(value) in page.content.decode()  # shown back as typed
    assert "k" not in AgentSession.objects.get(pk=session.id).state
