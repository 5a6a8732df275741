"""Fork and replay over HTTP: the form's data, a fork made (redirect or 201), both pages
showing the link, refusals that store nothing, and hostile input answered with a 400."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.controls.models import CallbackSetting
from agentdash.runs.models import Replay, Run
from tests.agentdash.dashboard.test_session_page import capital_session
from tests.agentdash.hostile import DEEP_JSON, HOSTILE_JSON, NUL, SURROGATE, Prober
from tests.agentdash.recording_executor import RecordingExecutor
from tests.agentdash.stored import store_event

pytestmark = pytest.mark.django_db

JSON = {"HTTP_ACCEPT": "application/json"}


@pytest.fixture
def parent(alice: User) -> AgentSession:
    """Alice's capital session: three events (two user messages), ``city`` set at the first."""
    session = capital_session(alice, state={"topic": "capitals"}, title="Capitals")
    store_event(session.pk, "What is the capital of France?", id="e1")
    store_event(session.pk, "Paris.", id="e2", author="capital_agent")
    store_event(session.pk, "And of Peru?", id="e3")
    return session


def fork_url(session: AgentSession) -> str:
    return reverse("dashboard:session_fork", kwargs={"session_id": session.pk})


def replay_url(session: AgentSession) -> str:
    return reverse("dashboard:session_replay", kwargs={"session_id": session.pk})


def the_fork(parent: AgentSession) -> AgentSession:
    return AgentSession.objects.get(parent=parent)


def test_the_owner_forks_and_both_pages_show_the_link(
    client: Client, alice: User, parent: AgentSession
) -> None:
    client.force_login(alice)
    response = client.post(fork_url(parent), {"event_id": "e2"})
    fork = the_fork(parent)
    assert response.status_code == 302
    assert response["Location"] == reverse("dashboard:session", kwargs={"session_id": fork.pk})
    assert list(SessionEvent.objects.filter(session=fork).values_list("event_id", flat=True)) == [
        "e1",
        "e2",
    ]
    assert fork.owner == alice and fork.forked_from_seq == 2

    page = client.get(response["Location"]).content.decode()
    parent_link = reverse("dashboard:session", kwargs={"session_id": parent.pk})
    assert f'<a href="{parent_link}">Capitals</a>' in page and "at event 2" in page
    assert 'id="replay-form"' in page
    listed = client.get(parent_link).content.decode()
    assert reverse("dashboard:session", kwargs={"session_id": fork.pk}) in listed
    assert "1 fork of this session" in listed
    # The home page lists it like any session.
    assert fork.title in client.get(reverse("dashboard:home")).content.decode()


def test_asked_for_json_a_fork_is_201_with_its_address(
    client: Client, alice: User, parent: AgentSession
) -> None:
    client.force_login(alice)
    response = client.post(fork_url(parent), {"event_id": "e1"}, **JSON)
    assert response.status_code == 201
    fork = the_fork(parent)
    assert response.json() == {
        "session": fork.pk,
        "url": f"/sessions/{fork.pk}/",
        "replay_url": f"/sessions/{fork.pk}/replay/",
    }


def test_the_form_starts_from_the_state_as_of_the_event_and_the_switches(
    client: Client, alice: User, operator_user: User, parent: AgentSession
) -> None:
    client.force_login(alice)
    answer = client.get(fork_url(parent), {"event_id": "e2"}).json()
    assert answer == {"event_id": "e2", "seq": 2, "author": "capital_agent"}  # no state: a user
    client.force_login(operator_user)
    answer = client.get(fork_url(parent), {"event_id": "e2"}).json()
    assert answer["state"] == {"topic": "capitals"}
    assert {"agent": "capital_agent", "name": "add_disclaimer", "enabled": True} in answer[
        "switches"
    ]
    for query, field in (({}, "event_id"), ({"event_id": "nope"}, "event_id")):
        response = client.get(fork_url(parent), query, **JSON)
        assert response.status_code == 400 and response.json()["error"]["field"] == field


def test_an_operator_forks_with_an_edited_state_and_switches(
    client: Client, operator_user: User, parent: AgentSession
) -> None:
    client.force_login(operator_user)
    response = client.post(
        fork_url(parent),
        {
            "event_id": "e3",
            "state": json.dumps({"topic": "rivers", "depth": 2}),
            "switches": json.dumps(
                [{"agent": "capital_agent", "name": "add_disclaimer", "enabled": False}]
            ),
        },
        **JSON,
    )
    assert response.status_code == 201, response.content
    fork = the_fork(parent)
    assert fork.state == {"topic": "rivers", "depth": 2} and fork.owner == operator_user
    setting = CallbackSetting.objects.get(session=fork)
    assert (setting.callback_name, setting.enabled) == ("add_disclaimer", False)


def test_what_the_user_may_not_do_is_refused_and_nothing_is_stored(
    client: Client, alice: User, bob: User, parent: AgentSession
) -> None:
    client.force_login(bob)
    assert client.post(fork_url(parent), {"event_id": "e1"}).status_code == 404
    assert client.get(fork_url(parent), {"event_id": "e1"}).status_code == 404
    client.force_login(alice)
    for field, value in (("state", '{"topic": "x"}'), ("switches", "[]")):
        response = client.post(fork_url(parent), {"event_id": "e1", field: value}, **JSON)
        assert response.status_code == 403, field
        assert response.json()["error"]["code"] == "forbidden"
    assert not AgentSession.objects.filter(parent=parent).exists()


@pytest.mark.parametrize(
    ("fields", "field", "says"),
    [
        ({"state": "[1, 2]"}, "state", "JSON object"),
        ({"state": '{"app:x": 1}'}, "state", "shared"),
        ({"state": "{"}, "state", "not JSON"),
        ({"state": DEEP_JSON}, "state", "deeper than 64"),
        ({"state": '{"k": "' + "x" * 200_001 + '"}'}, "state", "at most"),
        ({"switches": '{"add_disclaimer": false}'}, "switches", "JSON list"),
        ({"switches": '[{"agent": "capital_agent", "name": "nope", "enabled": false}]'},
         "switches", "not a callback"),
        ({"event_id": ""}, "event_id", "which event"),
        ({"event_id": "x" * 300}, "event_id", "no event"),
    ],
)  # fmt: skip
def test_bad_fields_are_a_400_naming_them(
    client: Client,
    operator_user: User,
    parent: AgentSession,
    fields: dict[str, str],
    field: str,
    says: str,
) -> None:
    client.force_login(operator_user)
    response = client.post(fork_url(parent), {"event_id": "e1", **fields}, **JSON)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["field"] == field and says in error["message"], error
    assert not AgentSession.objects.filter(parent=parent).exists()
    # Without scripts (no JSON asked for): a plain-text 400 saying the same.
    plain = client.post(fork_url(parent), {"event_id": "e1", **fields})
    assert plain.status_code == 400 and says in plain.content.decode()


def test_hostile_input_is_never_a_500(operator_user: User, parent: AgentSession) -> None:
    client = Client()
    client.force_login(operator_user)
    prober = Prober(client)
    url = fork_url(parent)
    for text in (*HOSTILE_JSON.values(), NUL, SURROGATE):
        for name in ("state", "switches", "event_id"):
            fields = {"event_id": "e1", name: text}
            response = prober.post(url, list(fields.items()))
            assert response.status_code == 400, (name, text[:40], response.content[:200])
        assert prober.get(url, [("event_id", text)]).status_code == 400
    assert prober.post(replay_url(parent), [("x", NUL)]).status_code == 400
    assert not AgentSession.objects.filter(parent=parent).exists()
    for text in HOSTILE_JSON.values():  # as text inside valid JSON: stored as typed
        nested: Any = {"k": text}
        response = prober.post(url, [("event_id", "e1"), ("state", json.dumps(nested))])
        assert response.status_code == 302


def test_replay_starts_the_first_message_and_answers_202(
    client: Client, alice: User, parent: AgentSession, recorder: RecordingExecutor
) -> None:
    client.force_login(alice)
    client.post(fork_url(parent), {"event_id": "e2"})
    fork = the_fork(parent)
    response = client.post(replay_url(fork), **JSON)
    assert response.status_code == 202
    run = Run.objects.get(session=fork)
    replay = Replay.objects.get(session=fork)
    assert response.json() == {
        "replay": replay.pk,
        "status": "active",
        "messages": 1,
        "runs": [run.pk],
    }
    assert run.message == {"role": "user", "parts": [{"text": "And of Peru?"}]}
    # Asked again while it is active: the same replay, nothing new queued.
    again = client.post(replay_url(fork), **JSON)
    assert again.status_code == 202 and again.json()["replay"] == replay.pk
    assert Run.objects.filter(session=fork).count() == 1
    # Not a fork, or nothing followed the fork point: 400.
    for session in (parent, _fork_at(client, parent, "e3")):
        refused = client.post(replay_url(session), **JSON)
        assert refused.status_code == 400 and refused.json()["error"]["field"] == "session"


def _fork_at(client: Client, parent: AgentSession, event_id: str) -> AgentSession:
    response = client.post(fork_url(parent), {"event_id": event_id}, **JSON)
    return AgentSession.objects.get(pk=response.json()["session"])


def test_the_page_offers_fork_here_to_scripts_with_its_nonce(
    client: Client, alice: User, operator_user: User, parent: AgentSession
) -> None:
    client.force_login(alice)
    response = client.get(reverse("dashboard:session", kwargs={"session_id": parent.pk}))
    html = response.content.decode()
    nonce = response.context["csp_nonce"]
    assert f'src="/static/dashboard/js/forks/fork.js" nonce="{nonce}"' in html
    assert 'id="fork-dialog"' in html and f'action="{fork_url(parent)}"' in html
    assert 'id="fork-state"' not in html and 'id="fork-switch-list"' not in html
    client.force_login(operator_user)
    html = client.get(reverse("dashboard:session", kwargs={"session_id": parent.pk})).content
    assert b'id="fork-state"' in html and b'id="fork-switch-list"' in html
