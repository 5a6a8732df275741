"""New chat: the page for an agent stores nothing; the first message starts the session and
its run together, then the session's page. Sent twice, the page starts one session."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agentdash.agent_sessions.models import AgentSession
from agentdash.core.models import AuditEntry
from agentdash.dashboard.chat.forms import start_token_make
from agentdash.runs.models import Run
from tests.agentdash.recording_executor import RecordingExecutor

pytestmark = pytest.mark.django_db

NEW = reverse("dashboard:chat_new")
START = reverse("dashboard:session_new")


def start_token(page: str) -> str:
    found = re.search(r'name="start" value="([^"]+)"', page)
    assert found, "the new-chat page carries no start token"
    return found.group(1)


def test_the_new_chat_page_stores_nothing(client: Client, alice: User) -> None:
    client.force_login(alice)
    for _ in range(3):
        response = client.get(NEW, {"agent": "capital_agent"})
        assert response.status_code == 200
    page = response.content.decode()
    assert "New chat with" in page and "capital_agent" in page
    assert 'id="new-chat-form"' in page and 'name="text"' in page
    assert "csrfmiddlewaretoken" in page
    assert not AgentSession.objects.exists() and not AuditEntry.objects.exists()


@pytest.mark.parametrize("agent", ["", "no_such_agent", "<script>"])
def test_the_new_chat_page_of_an_unknown_agent_is_a_404(
    client: Client, alice: User, agent: str
) -> None:
    client.force_login(alice)
    assert client.get(NEW, {"agent": agent}).status_code == 404


def test_the_first_message_starts_the_session_and_opens_its_page(
    client: Client,
    alice: User,
    recorder: RecordingExecutor,
    django_capture_on_commit_callbacks: Any,
) -> None:
    client.force_login(alice)
    token = start_token(client.get(NEW, {"agent": "capital_agent"}).content.decode())
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            START, {"agent": "capital_agent", "text": "Capital of France?", "start": token}
        )
    session = AgentSession.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("dashboard:session", kwargs={"session_id": session.id})
    assert (session.owner, session.app_name, session.title) == (
        alice, "capital_agent", "Capital of France?",
    )  # fmt: skip
    (run,) = Run.objects.all()
    assert run.session == session and recorder.submitted == [run.pk]
    assert AuditEntry.objects.filter(action="session.create", actor=alice).count() == 1


def test_the_same_page_sent_twice_starts_one_session(
    client: Client, alice: User, recorder: RecordingExecutor
) -> None:
    client.force_login(alice)
    token = start_token(client.get(NEW, {"agent": "capital_agent"}).content.decode())
    data = {"agent": "capital_agent", "text": "Capital of France?", "start": token}
    first = client.post(START, data)
    second = client.post(START, data)
    assert first["Location"] == second["Location"]
    assert AgentSession.objects.count() == 1 and Run.objects.count() == 1


def test_someone_elses_token_opens_nothing(
    client: Client, alice: User, bob: User, recorder: RecordingExecutor
) -> None:
    token = start_token_make("bobs-chat")
    client.force_login(bob)
    client.post(START, {"agent": "capital_agent", "text": "mine", "start": token})
    client.force_login(alice)
    response = client.post(START, {"agent": "capital_agent", "text": "hi", "start": token})
    assert response.status_code == 400
    assert list(AgentSession.objects.values_list("owner__username", flat=True)) == ["bob"]


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ({"text": ""}, "This field is required"),
        ({"text": "   \n  "}, "a chat starts with what you say"),
        ({"text": "x" * 20_001}, "at most 20000 characters"),
        ({"text": "hi", "start": "forged-id:signature"}, "out of date"),
    ],
)
def test_a_refused_first_message_shows_the_page_again_and_stores_nothing(
    client: Client, alice: User, recorder: RecordingExecutor, data: dict[str, str], said: str
) -> None:
    client.force_login(alice)
    response = client.post(START, {"agent": "capital_agent", **data})
    assert response.status_code == 400
    page = response.content.decode()
    assert said in page and 'id="new-chat-form"' in page
    assert not AgentSession.objects.exists() and not Run.objects.exists()


def test_a_page_with_a_bad_token_comes_back_with_a_good_one(
    client: Client, alice: User, recorder: RecordingExecutor
) -> None:
    client.force_login(alice)
    refused = client.post(START, {"agent": "capital_agent", "text": "hi", "start": "old:sig"})
    token = start_token(refused.content.decode())
    assert token != "old:sig"
    again = client.post(START, {"agent": "capital_agent", "text": "hi", "start": token})
    assert again.status_code == 302 and AgentSession.objects.count() == 1


def test_the_text_shown_again_stays_text(
    client: Client, alice: User, recorder: RecordingExecutor
) -> None:
    client.force_login(alice)
    attack = "</textarea><script>alert(1)</script>"
    response = client.post(START, {"agent": "capital_agent", "text": attack, "start": "forged:sig"})
    page = response.content.decode()
    assert response.status_code == 400  # the forged token: shown again with the text
    assert "<script>alert(1)" not in page and "&lt;/textarea&gt;&lt;script&gt;" in page


def test_an_unknown_agent_is_refused(client: Client, alice: User) -> None:
    client.force_login(alice)
    response = client.post(START, {"agent": "no_such_agent", "text": "hi"})
    assert response.status_code == 400
    assert not AgentSession.objects.exists()


def test_starting_needs_the_csrf_token(alice: User) -> None:
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    response = browser.post(START, {"agent": "capital_agent", "text": "hi"})
    assert response.status_code == 403
    assert not AgentSession.objects.exists()


def test_the_home_page_offers_a_new_chat_per_agent(client: Client, alice: User) -> None:
    client.force_login(alice)
    page = client.get(reverse("dashboard:home")).content.decode()
    forms = re.findall(
        r'<form method="get" action="/chat/" class="new-chat">(.*?)</form>', page, re.S
    )
    agents = set(re.findall(r'name="agent" value="([^"]+)"', "".join(forms)))
    assert agents == {"capital_agent", "support_desk", "data_agent", "analyst"}
