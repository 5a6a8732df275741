"""Session ids: the alphabet new ids are made of, and URLs that carry any stored id."""

from __future__ import annotations

import uuid
from urllib.parse import unquote

import pytest
from django.urls import NoReverseMatch, path, resolve, reverse

from agentdash.agent_sessions.ids import (
    SessionIdConverter,
    session_id_check,
    session_id_in_url,
    session_id_problem,
)
from agentdash.agent_sessions.models import AgentSession
from agentdash.agent_sessions.services import session_create
from agentdash.agent_sessions.session_service import DjangoSessionService
from runtime.sessions.in_memory_session_service import InMemorySessionService

# A uuid4 hex as the app makes them (a fixed one: test ids must be the same in every process)
GOOD = [
    uuid.UUID("2d2cc9d4-edb3-4d6b-b67e-c704d31e7511").hex,
    "s1",
    "s-golden",
    "a.b:c_d-e",
    "Session.2024-01-01T10:00",
    "x" * 128,
]
BAD = ["", "a/b", "a b", "é", "x" * 129, ".", "..", "a\x00b", "a?b", "%41", "a#b", "\ud800"]
# What rows stored before the rule may hold: every one must survive a URL.
STORED = ["a/b", "..", ".", "./x", "a/../b", "50%", "a?b#c", "sp ace", "é", "%2F", "a%252Fb",
          "_5F", "x" * 128, "/", "a//b", "~home", "a;b=c", "'\"<>"]  # fmt: skip


@pytest.mark.parametrize("session_id", GOOD)
def test_the_alphabet(session_id: str) -> None:
    assert session_id_problem(session_id) is None
    assert session_id_check(session_id) == session_id


@pytest.mark.parametrize("session_id", BAD, ids=repr)
def test_what_is_refused(session_id: str) -> None:
    assert session_id_problem(session_id) is not None
    with pytest.raises(ValueError, match="session id"):
        session_id_check(session_id)


def test_what_the_runtime_and_the_dashboard_make_fits() -> None:
    made = InMemorySessionService().create_session(app_name="app", user_id="u")
    assert session_id_problem(made.id) is None


@pytest.mark.django_db
def test_every_session_service_refuses_an_id_outside_the_alphabet() -> None:
    with pytest.raises(ValueError, match=r"must be 1–128 characters of A–Z a–z 0–9 \. _ : -"):
        session_create(app_name="app", user_id="u", session_id="a/b")
    with pytest.raises(ValueError, match="session id"):
        DjangoSessionService().create_session(app_name="app", user_id="u", session_id="a b")
    assert not AgentSession.objects.exists()
    assert session_create(app_name="app", user_id="u", session_id=" s:1 ").id == "s:1"


@pytest.mark.parametrize("session_id", GOOD)
def test_ids_of_the_alphabet_appear_in_urls_as_they_are(session_id: str) -> None:
    assert reverse("dashboard:session", kwargs={"session_id": session_id}) == (
        f"/sessions/{session_id}/"
    )


@pytest.mark.parametrize("session_id", STORED, ids=repr)
def test_any_stored_id_goes_through_a_url_and_back(session_id: str) -> None:
    url = reverse("dashboard:session", kwargs={"session_id": session_id})
    segment = url.removeprefix("/sessions/").removesuffix("/")
    assert "/" not in segment and segment not in (".", ".."), url  # one segment, no dot segment
    decoded = unquote(url)  # what the server hands to routing
    assert resolve(decoded).kwargs == {"session_id": session_id}


def test_a_websocket_route_with_the_converter_reads_the_socket_path() -> None:
    from agentdash.dashboard.session.selectors import session_ws_path

    route = path("ws/sessions/<session_id:session_id>/", lambda request: None)
    for session_id in [*GOOD, *STORED]:
        decoded = unquote(session_ws_path(session_id=session_id))
        match = route.resolve(decoded.removeprefix("/"))
        assert match is not None and match.kwargs == {"session_id": session_id}, session_id


def test_ids_no_row_can_have_match_no_route() -> None:
    converter = SessionIdConverter()
    for value in ("a%00b", "a\ud800", "x" * 129, "a\x00"):
        with pytest.raises(ValueError):
            converter.to_python(value)
    assert converter.to_python("a%2Fb") == "a/b"
    assert session_id_in_url("..") == "%2E%2E"


def test_reverse_never_fails_for_a_stored_id() -> None:
    for session_id in [*STORED, "\x00"]:
        try:
            reverse("dashboard:session", kwargs={"session_id": session_id})
        except NoReverseMatch:  # pragma: no cover - the failure this guards against
            pytest.fail(f"no URL for {session_id!r}")
