"""Sessions stored with ids outside today's alphabet (a ``/``, a ``?``, ``..``) still list
and open, for their owner and for operators: every link quotes the id
(agentdash.agent_sessions.ids)."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.agentdash.agent_sessions.test_ids import STORED
from tests.agentdash.stored import session_of

pytestmark = pytest.mark.django_db

_LINK = re.compile(  # a row's title link, then (past its owner's rename form) its id
    r'<a class="session-title[^"]*" href="(/sessions/[^"]+)"[^>]*>[^<]*</a>'
    r'(?:(?!</td>).)*?<code class="session-id">([^<]*)</code>',
    re.S,
)


def _links(html: str) -> dict[str, str]:
    """Session id shown → its link, from the sessions list."""
    return {unescape(shown): unescape(href) for href, shown in _LINK.findall(html)}


@pytest.mark.parametrize("who", ["owner", "operator"])
def test_the_list_renders_and_every_link_opens_its_session(
    alice: User, operator_user: User, who: str
) -> None:
    for session_id in STORED:
        session_of(alice, session_id, app_name="capital_agent")
    client = Client()
    client.force_login(alice if who == "owner" else operator_user)
    home = client.get("/")
    assert home.status_code == 200
    links = _links(home.content.decode())
    assert set(links) == set(STORED)
    for session_id, href in links.items():
        page = client.get(href)  # the client decodes the path once, as a server does
        assert page.status_code == 200, (session_id, href)
        assert page.context["session"].id == session_id


def test_someone_else_still_gets_404(alice: User, bob: User) -> None:
    session_of(alice, "a/b", app_name="capital_agent")
    client = Client()
    client.force_login(bob)
    assert client.get("/sessions/a%252Fb/").status_code == 404
    assert "a/b" not in client.get("/").content.decode()
