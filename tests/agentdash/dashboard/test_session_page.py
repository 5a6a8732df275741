"""The session page: who gets what, and what the page hands its scripts through
``json_script``. (Starting a chat: test_chat_start.py.)"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agentdash.agent_sessions.models import AgentSession
from agentdash.agent_sessions.services import session_create, session_state_update
from agentdash.controls.services import callback_setting_set
from agentdash.dashboard.session.selectors import session_ws_path
from agentdash.scores.models import ScoreDefinition
from runtime.telemetry.attributes import CONTENT_CAPTURE
from tests.agentdash.stored import session_of

pytestmark = pytest.mark.django_db

CAPITAL_CALLBACKS = {
    ("before_model", "block_keyword_guardrail"),
    ("after_model", "add_disclaimer"),
    ("before_tool", "redirect_canada"),
    ("after_tool", "annotate_usa"),
    ("callbacks", "StepLogger"),  # the default logging callbacks (any-agent style)
}


def capital_session(owner: User, **kwargs: Any) -> AgentSession:
    return session_create(app_name="capital_agent", user_id=str(owner.pk), owner=owner, **kwargs)


def page_data(html: str, element: str = "session-data") -> dict[str, Any]:
    found = re.search(rf'<script id="{element}" type="application/json">(.*?)</script>', html)
    assert found, f"the page has no json_script element #{element}"
    return json.loads(found.group(1))


# ── The session page ───────────────────────────────────────────────────────────────────────
def test_the_owner_gets_the_page_with_its_data(client: Client, alice: User) -> None:
    session = capital_session(alice, state={"topic": "capitals"})
    # The chat's thumbs (a flush after a transactional test takes the migration's row away).
    ScoreDefinition.objects.get_or_create(name="user_feedback", defaults={"kind": "boolean"})
    client.force_login(alice)
    response = client.get(reverse("dashboard:session", kwargs={"session_id": session.id}))
    assert response.status_code == 200
    html = response.content.decode()
    data = page_data(html)
    assert data == {
        "session_id": session.id,
        "app_name": "capital_agent",
        "model": "offline",
        "ws_path": f"/ws/sessions/{session.id}/",
        "data_path": f"/sessions/{session.id}/",
        "is_operator": False,
        "can_edit_state": False,
        "can_cancel": True,  # the owner stops their own runs from the chat
        "callbacks": [],
        "feedback": True,
        "scores_path": f"/sessions/{session.id}/scores/",
        "me": "alice",
    }
    assert 'id="controls"' not in html  # no operator controls for users
    snapshot = page_data(html, "session-snapshot")
    assert snapshot["seq"] == 0 and snapshot["events"] == [] and snapshot["spans_total"] == 0
    nonce = response.context["csp_nonce"]
    src = "/static/dashboard/js/session/session.js"
    assert f'<script type="module" src="{src}" nonce="{nonce}">' in html


def test_an_operator_gets_callbacks_state_and_version(
    client: Client, alice: User, operator_user: User
) -> None:
    session = capital_session(alice, state={"topic": "capitals", "user:tier": "gold"})
    session_state_update(
        session_id=session.id, delta={"topic": "cities"}, expected_version=0,
        actor=operator_user, reason="test",
    )  # fmt: skip
    client.force_login(operator_user)
    response = client.get(reverse("dashboard:session", kwargs={"session_id": session.id}))
    html = response.content.decode()
    data = page_data(html)
    assert data["is_operator"] is True and data["can_edit_state"] is True
    assert data["can_cancel"] is True  # not the owner: by the permission to cancel runs
    assert data["state"] == {"topic": "cities", "user:tier": "gold"}
    assert data["version"] == 1
    slots = {(cb["slot"], cb["name"]) for cb in data["callbacks"]}
    assert CAPITAL_CALLBACKS | {("built-in", CONTENT_CAPTURE)} == slots
    assert all(cb["enabled"] is True and cb["global"] is None for cb in data["callbacks"])
    for marker in ('id="controls"', 'id="state-form"', 'id="callbacks"', 'id="runs"'):
        assert marker in html


def test_callback_switches_show_the_settings_that_apply(
    client: Client, alice: User, operator_user: User
) -> None:
    session = capital_session(alice)
    other = capital_session(alice)
    switch = {"agent_name": "capital_agent", "actor": operator_user}
    callback_setting_set(**switch, callback_name="add_disclaimer", enabled=False)
    callback_setting_set(
        **switch, callback_name="add_disclaimer", enabled=True, session_id=session.id
    )
    callback_setting_set(
        **switch, callback_name="redirect_canada", enabled=False, session_id=other.id
    )
    client.force_login(operator_user)
    html = client.get(reverse("dashboard:session", kwargs={"session_id": session.id}))
    by_name = {cb["name"]: cb for cb in page_data(html.content.decode())["callbacks"]}
    disclaimer, canada = by_name["add_disclaimer"], by_name["redirect_canada"]
    switches = ("global", "session", "enabled")
    assert [disclaimer[k] for k in switches] == [False, True, True]
    # Another session's switch does not apply here.
    assert [canada[k] for k in switches] == [None, None, True]


def test_someone_elses_session_is_not_found(client: Client, alice: User, bob: User) -> None:
    session = capital_session(bob)
    client.force_login(alice)
    response = client.get(reverse("dashboard:session", kwargs={"session_id": session.id}))
    assert response.status_code == 404
    assert session.id not in response.content.decode()


def test_the_page_escapes_what_it_shows(client: Client, alice: User) -> None:
    # An id no service makes any more (agentdash.agent_sessions.ids), stored before the rule.
    session = session_of(alice, 'x"><img src=x onerror=alert(1)>', app_name="capital_agent")
    client.force_login(alice)
    response = client.get(reverse("dashboard:session", kwargs={"session_id": session.id}))
    html = response.content.decode()
    assert response.status_code == 200
    assert "<img" not in html
    assert page_data(html)["session_id"] == session.id


def test_the_socket_path_encodes_the_id_as_the_route_converter_reads_it() -> None:
    assert session_ws_path(session_id="3f9c0e.run:1_a-b") == "/ws/sessions/3f9c0e.run:1_a-b/"
    # The server decodes the path once before routing; the converter decodes it again.
    assert session_ws_path(session_id="a b/c?") == "/ws/sessions/a%2520b%252Fc%253F/"
    assert session_ws_path(session_id="..") == "/ws/sessions/%252E%252E/"


def test_a_session_of_an_agent_no_longer_configured_still_opens(
    client: Client, operator_user: User
) -> None:
    session = session_create(app_name="retired_agent", user_id="x", owner=operator_user)
    client.force_login(operator_user)
    response = client.get(reverse("dashboard:session", kwargs={"session_id": session.id}))
    assert response.status_code == 200
    data = page_data(response.content.decode())
    assert (data["model"], data["callbacks"]) == ("", [])


def _modules_imported_from(entry: str) -> set[str]:
    """Every module ``entry`` imports, directly or not (static paths, e.g. core/js/dom.js)."""
    from django.contrib.staticfiles import finders

    seen: set[str] = set()
    waiting = [entry]
    while waiting:
        name = waiting.pop()
        if name in seen:
            continue
        seen.add(name)
        found = finders.find(name)
        assert found, f"{name} is imported but is no static file"
        source = open(found, encoding="utf-8").read()  # noqa: SIM115
        for target in re.findall(r'^import [^;]*? from "(\.[^"]+)";', source, re.M | re.S):
            parts = name.split("/")[:-1]
            for step in target.split("/"):
                if step == "..":
                    parts.pop()
                elif step != ".":
                    parts.append(step)
            waiting.append("/".join(parts))
    return seen


def test_the_page_preloads_every_module_it_imports(client: Client, alice: User) -> None:
    """One round of requests instead of one per level of imports; a module added to the page
    and not to the list fails here."""
    session = capital_session(alice)
    client.force_login(alice)
    response = client.get(reverse("dashboard:session", kwargs={"session_id": session.id}))
    html = response.content.decode()
    nonce = response.context["csp_nonce"]
    preloaded = re.findall(
        rf'<link rel="modulepreload" href="/static/([^"]+)" nonce="{nonce}">', html
    )
    assert set(preloaded) == _modules_imported_from("dashboard/js/session/session.js")
    assert len(preloaded) == len(set(preloaded))


def test_no_template_comment_leaks_into_a_page(client: Client, alice: User) -> None:
    """Django's ``{# #}`` comments end at the line's end: one spread over lines is shown."""
    session = capital_session(alice)
    client.force_login(alice)
    for name, kwargs in (("home", {}), ("session", {"session_id": session.id})):
        html = client.get(reverse(f"dashboard:{name}", kwargs=kwargs)).content.decode()
        assert "{#" not in html and "#}" not in html and "{%" not in html, name
