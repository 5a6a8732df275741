"""The sessions list as served: its columns, counts and times, its filters and pages; and
renaming (the owner) and deleting (the owner or an operator) from it."""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agentdash.agent_sessions.models import AgentSession
from agentdash.core.models import AuditEntry
from agentdash.runs.models import Run
from agentdash.scores.judge import JUDGE_APP
from tests.agentdash.dashboard.test_session_list import make

pytestmark = pytest.mark.django_db

HOME = reverse("dashboard:home")


def rename_url(session_id: str) -> str:
    return reverse("dashboard:session_rename", kwargs={"session_id": session_id})


def delete_url(session_id: str) -> str:
    return reverse("dashboard:session_delete", kwargs={"session_id": session_id})


def rows(page: str) -> list[str]:
    return re.findall(r'<tr class="session-row" data-session-id="([^"]+)"', page)


def test_a_row_shows_title_agent_times_status_and_counts(client: Client, alice: User) -> None:
    make("s1", owner=alice, title="Trip <b>planning</b>", at=1_700_000_000.0,
         runs=("failed",), spans=1_234, errors=1_001)  # fmt: skip
    client.force_login(alice)
    page = client.get(HOME).content.decode()
    assert rows(page) == ["s1"]
    assert "Trip &lt;b&gt;planning&lt;/b&gt;" in page  # text, not markup
    assert ">1,234</td>" in page and ">1,001</td>" in page  # thousands separators
    assert '<time datetime="2023-11-14T22:13:20+00:00" data-format="ago">' in page
    assert re.search(r'<time datetime="\d{4}-\d\d-\d\dT[^"]+" data-format="date">', page)
    assert 'data-status="failed">failed</span>' in page
    assert ">Owner<" not in page  # users see their own sessions: no owner column
    assert 'href="/sessions/s1/rename/?next=/"' in page and 'href="/sessions/s1/delete/?' in page


def test_an_operator_gets_the_owner_column_and_filter(
    client: Client, alice: User, bob: User, operator_user: User
) -> None:
    make("a", owner=alice, at=1)
    make("b", owner=bob, at=2)
    client.force_login(operator_user)
    page = client.get(HOME).content.decode()
    assert rows(page) == ["b", "a"] and ">Owner<" in page and 'name="owner"' in page
    assert 'href="?owner=alice"' in page
    assert rows(client.get(HOME, {"owner": "alice"}).content.decode()) == ["a"]
    assert 'href="/sessions/a/rename/' not in page  # not the owner: no rename
    assert 'href="/sessions/a/delete/' in page  # an operator may delete any


def test_filters_and_pages_through_the_query_string(client: Client, alice: User) -> None:
    for n in range(60):
        make(f"s{n:02d}", owner=alice, at=float(n), title=f"Chat {n}",
             app="data_agent" if n % 2 else "capital_agent")  # fmt: skip
    client.force_login(alice)
    first = client.get(HOME).content.decode()
    assert len(rows(first)) == 50 and rows(first)[0] == "s59"
    older = re.search(r'href="\?after=([^"]+)" rel="next"', first)
    assert older, "no link to older sessions"
    second = client.get(f"{HOME}?after={older.group(1)}").content.decode()
    assert rows(second) == [f"s{n:02d}" for n in range(9, -1, -1)]
    assert 'rel="prev"' in second and 'rel="next"' not in second

    narrowed = client.get(HOME, {"agent": "data_agent", "q": "chat 5"}).content.decode()
    assert rows(narrowed) == ["s59", "s57", "s55", "s53", "s51", "s05"]
    assert 'href="/"' in narrowed and "Clear" in narrowed
    assert 'value="chat 5"' in narrowed  # the search box keeps what was asked

    empty = client.get(HOME, {"q": "nothing like it"}).content.decode()
    assert rows(empty) == [] and "No sessions match these filters" in empty


@pytest.mark.parametrize(
    "query",
    [{"status": "exploded"}, {"agent": "<script>"}, {"after": "garbage"}, {"before": "1e999:x"},
     {"q": "x" * 201}, {"with_errors": "maybe"}],
)  # fmt: skip
def test_filters_that_are_not_valid_are_ignored(
    client: Client, alice: User, query: dict[str, str]
) -> None:
    make("s1", owner=alice)
    client.force_login(alice)
    response = client.get(HOME, query)
    assert response.status_code == 200
    assert "<script>" not in response.content.decode()


def test_no_sessions_yet_says_how_to_start(client: Client, alice: User) -> None:
    client.force_login(alice)
    page = client.get(HOME).content.decode()
    assert "No sessions yet" in page and "first message" in page


def test_a_page_left_empty_says_so(client: Client, alice: User) -> None:
    """Its sessions were deleted (or became active, moving up) since the link was made."""
    make("s1", owner=alice, at=5)
    client.force_login(alice)
    page = client.get(HOME, {"after": "1.0:zz", "agent": "capital_agent"}).content.decode()
    assert rows(page) == [] and "No sessions yet" not in page
    assert "No sessions on this page" in page and 'href="?agent=capital_agent"' in page


# ── Rename ─────────────────────────────────────────────────────────────────────────────────
def test_the_owner_renames_and_goes_back_to_the_list(client: Client, alice: User) -> None:
    make("s1", owner=alice, title="Old")
    client.force_login(alice)
    form = client.get(rename_url("s1"), {"next": "/?q=x"})
    assert form.status_code == 200 and 'value="Old"' in form.content.decode()
    response = client.post(rename_url("s1"), {"title": "  New\nname ", "next": "/?q=x"})
    assert response.status_code == 302 and response["Location"] == "/?q=x"
    assert AgentSession.objects.get().title == "New name"
    assert "Renamed to “New name”" in client.get(HOME).content.decode()


def test_renaming_in_place_answers_json(client: Client, alice: User) -> None:
    make("s1", owner=alice, title="Old")
    client.force_login(alice)
    json_accept = {"HTTP_ACCEPT": "application/json"}
    ok = client.post(rename_url("s1"), {"title": "<i>New</i>"}, **json_accept)
    assert ok.status_code == 200 and json.loads(ok.content) == {"title": "<i>New</i>"}
    refused = client.post(rename_url("s1"), {"title": "   "}, **json_accept)
    assert refused.status_code == 400 and "empty" in json.loads(refused.content)["error"]
    too_long = client.post(rename_url("s1"), {"title": "x" * 121}, **json_accept)
    assert too_long.status_code == 400 and "120" in json.loads(too_long.content)["error"]
    assert AgentSession.objects.get().title == "<i>New</i>"


def test_a_rename_goes_back_only_to_this_site(client: Client, alice: User) -> None:
    make("s1", owner=alice)
    client.force_login(alice)
    for elsewhere in ("https://evil.example.com/", "//evil.example.com/", "javascript:alert(1)"):
        response = client.post(rename_url("s1"), {"title": "t", "next": elsewhere})
        assert response["Location"] == "/", elsewhere


def test_only_the_owner_renames(
    client: Client, alice: User, bob: User, operator_user: User
) -> None:
    make("s1", owner=alice, title="Kept")
    client.force_login(operator_user)
    assert client.post(rename_url("s1"), {"title": "Taken"}).status_code == 403
    client.force_login(bob)
    assert client.post(rename_url("s1"), {"title": "Taken"}).status_code == 404
    assert AgentSession.objects.get().title == "Kept"


def test_renaming_needs_the_csrf_token(alice: User) -> None:
    make("s1", owner=alice, title="Kept")
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    assert browser.post(rename_url("s1"), {"title": "Taken"}).status_code == 403
    assert AgentSession.objects.get().title == "Kept"


# ── Delete ─────────────────────────────────────────────────────────────────────────────────
def test_deleting_asks_first_then_deletes_and_is_audited(client: Client, alice: User) -> None:
    make("s1", owner=alice, title="Doomed", runs=("succeeded",), spans=1_500)
    client.force_login(alice)
    confirm = client.get(delete_url("s1"), {"next": "/?q=doom"})
    page = confirm.content.decode()
    assert confirm.status_code == 200 and "Delete this session?" in page
    assert "1 run," in page and "1,500 spans" in page and 'value="/?q=doom"' in page
    assert AgentSession.objects.exists()  # asking deletes nothing

    response = client.post(delete_url("s1"), {"next": "/?q=doom"})
    assert response.status_code == 302 and response["Location"] == "/?q=doom"
    assert not AgentSession.objects.exists() and not Run.objects.exists()
    audit = AuditEntry.objects.get(action="session.delete")
    assert (audit.actor, audit.target_id) == (alice, "s1")
    assert "Deleted “Doomed”" in client.get(HOME).content.decode()


def test_an_operator_deletes_anyones_and_others_cannot(
    client: Client, alice: User, bob: User, operator_user: User
) -> None:
    make("s1", owner=alice)
    client.force_login(bob)
    assert client.post(delete_url("s1")).status_code == 404
    assert client.get(delete_url("s1")).status_code == 404
    client.force_login(operator_user)
    assert client.post(delete_url("s1")).status_code == 302
    assert not AgentSession.objects.exists()
    assert AuditEntry.objects.get(action="session.delete").actor == operator_user


def test_a_session_with_a_run_in_progress_is_kept(client: Client, alice: User) -> None:
    make("s1", owner=alice, runs=("running",))
    client.force_login(alice)
    assert "still in progress" in client.get(delete_url("s1")).content.decode()  # said first
    response = client.post(delete_url("s1"))
    assert response.status_code == 409 and "in progress" in response.content.decode()
    assert AgentSession.objects.exists()


def test_deleting_needs_the_csrf_token(alice: User) -> None:
    make("s1", owner=alice)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    assert browser.post(delete_url("s1")).status_code == 403
    assert AgentSession.objects.exists()


def test_the_judges_own_sessions_are_left_out_until_asked_for(
    client: Client, operator_user: User, alice: User
) -> None:
    """An LLM judge's sessions (app ``judge``, no owner) are an evaluator's, not an agent's:
    an operator's list leaves them out, and shows them when asked."""
    make("agent-run", owner=alice, at=1)
    make("judged", app=JUDGE_APP, at=2, title="helpful on run 7")
    client.force_login(operator_user)
    page = client.get(HOME).content.decode()
    assert rows(page) == ["agent-run"]
    assert 'name="judges"' in page  # the way to ask for them
    asked = client.get(HOME, {"judges": "1"})
    assert rows(asked.content.decode()) == ["judged", "agent-run"]
    assert asked.context["query"] == "judges=1"  # kept by the pages' links
    client.force_login(alice)  # not an operator: never saw them, no box to ask
    assert 'name="judges"' not in client.get(HOME).content.decode()
