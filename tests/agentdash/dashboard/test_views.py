"""The home page and the login form."""

from __future__ import annotations

import re
import time
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from agentdash.agent_sessions.models import AgentSession
from agentdash.demo.seed import DEFAULT_DEMO_PASSWORD

pytestmark = pytest.mark.django_db


def session_for(owner: User, session_id: str) -> AgentSession:
    return AgentSession.objects.create(
        id=session_id,
        app_name="capital_agent",
        user_id=str(owner.pk),
        owner=owner,
        last_update_time=time.time(),
    )


def test_anonymous_users_are_sent_to_the_login_page(client: Client) -> None:
    response = client.get(reverse("dashboard:home"))
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('login')}?next=/"


def test_a_user_sees_only_their_own_sessions(client: Client, alice: User, bob: User) -> None:
    session_for(alice, "alice-session-1")
    session_for(bob, "bob-session-1")
    client.force_login(alice)
    page = client.get(reverse("dashboard:home")).content.decode()
    assert "Your sessions" in page
    assert "alice-session-1" in page and "bob-session-1" not in page


def test_an_operator_sees_every_session(
    client: Client, alice: User, bob: User, operator_user: User
) -> None:
    session_for(alice, "alice-session-1")
    session_for(bob, "bob-session-1")
    client.force_login(operator_user)
    page = client.get(reverse("dashboard:home")).content.decode()
    assert "All sessions" in page
    assert "alice-session-1" in page and "bob-session-1" in page


def test_the_home_page_lists_the_agents_and_their_callbacks(client: Client, alice: User) -> None:
    client.force_login(alice)
    page = client.get(reverse("dashboard:home")).content.decode()
    for name in ("capital_agent", "support_desk", "data_agent", "block_keyword_guardrail"):
        assert name in page


def test_login_with_the_demo_password_through_the_form(settings) -> None:  # type: ignore[no-untyped-def]
    settings.DEBUG = True
    settings.AGENTDASH = {**settings.AGENTDASH, "DEMO_PASSWORD": ""}
    call_command("seed_demo", stdout=StringIO())
    browser = Client(enforce_csrf_checks=True)
    form = browser.get(reverse("login")).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form)
    assert token is not None
    response = browser.post(
        reverse("login"),
        {
            "username": "alice",
            "password": DEFAULT_DEMO_PASSWORD,
            "csrfmiddlewaretoken": token.group(1),
            "next": "",
        },
    )
    assert response.status_code == 302 and response["Location"] == reverse("dashboard:home")
    assert "Your sessions" in browser.get(reverse("dashboard:home")).content.decode()


def test_a_wrong_password_is_refused(client: Client, alice: User) -> None:
    response = client.post(reverse("login"), {"username": "alice", "password": "wrong"})
    assert response.status_code == 200
    assert "didn't match" in response.content.decode()


@pytest.mark.parametrize("debug", [True, False])
def test_the_demo_hint_shows_only_with_debug(
    settings, client: Client, alice: User, debug: bool
) -> None:  # type: ignore[no-untyped-def]
    settings.DEBUG = debug
    settings.AGENTDASH = {**settings.AGENTDASH, "DEMO_PASSWORD": ""}
    login_page = client.get(reverse("login")).content.decode()
    client.force_login(alice)
    home_page = client.get(reverse("dashboard:home")).content.decode()
    for page in (login_page, home_page):
        assert ("demo-hint" in page) is debug
        assert (DEFAULT_DEMO_PASSWORD in page) is debug


def test_the_hint_never_shows_a_configured_password(settings, client: Client) -> None:  # type: ignore[no-untyped-def]
    settings.DEBUG = True
    settings.AGENTDASH = {**settings.AGENTDASH, "DEMO_PASSWORD": "from-the-environment"}
    page = client.get(reverse("login")).content.decode()
    assert "demo-hint" in page and "from-the-environment" not in page
