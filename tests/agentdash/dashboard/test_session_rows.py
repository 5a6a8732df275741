"""``/session-rows/``: the sessions list's rows read again for a page kept current — only the
reader's, only those still matching the page's filters, with the count of newer ones."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agentdash.agent_sessions.models import AgentSession
from agentdash.dashboard.sessions_list.reads import NEWER_COUNTED_MAX, REFRESH_IDS_MAX, Cursor
from tests.agentdash.dashboard.test_session_list import make

pytestmark = pytest.mark.django_db

URL = "/session-rows/"


def rows(client: Client, **query: Any) -> dict[str, Any]:
    response = client.get(f"{URL}?{urlencode(query, doseq=True)}")
    assert response.status_code == 200, response.content
    found: dict[str, Any] = response.json()
    return found


def cursor(session: AgentSession) -> str:
    return str(Cursor(session.last_update_time, session.id))


def test_the_rows_asked_for_are_read_again_with_every_cell(client: Client, alice: User) -> None:
    a = make("row-a", owner=alice, at=2_000.0, title="<b>A</b>", first="hi", runs=("failed",),
             spans=3, errors=1)  # fmt: skip
    b = make("row-b", owner=alice, at=1_000.0)
    client.force_login(alice)

    found = rows(client, id=[b.id, a.id])

    assert [r["id"] for r in found["rows"]] == ["row-a", "row-b"]  # newest activity first
    first = found["rows"][0]
    assert first["title"] == "<b>A</b>"  # raw text: the page sets it as text
    assert (first["run_status"], first["span_count"], first["error_count"]) == ("failed", 3, 1)
    assert first["cursor"] == cursor(a) and first["last_activity"].startswith("1970-01-01T00:33")
    assert first["usage_tokens"] == "—" and first["usage"]["calls"] == 0
    assert found["newer"] == 0


def test_someone_elses_and_missing_sessions_are_left_out(
    client: Client, alice: User, bob: User, operator_user: User
) -> None:
    make("mine", owner=alice)
    make("theirs", owner=bob)
    client.force_login(alice)
    assert [r["id"] for r in rows(client, id=["mine", "theirs", "gone"])["rows"]] == ["mine"]
    client.force_login(operator_user)
    assert {r["id"] for r in rows(client, id=["mine", "theirs"])["rows"]} == {"mine", "theirs"}


def test_rows_that_no_longer_match_the_filters_are_left_out(client: Client, alice: User) -> None:
    make("ran", owner=alice, runs=("succeeded",))
    make("runs", owner=alice, runs=("running",))
    make("other", owner=alice, app="data_agent", runs=("running",))
    client.force_login(alice)

    found = rows(client, id=["ran", "runs", "other"], status="active", agent="capital_agent")

    assert [r["id"] for r in found["rows"]] == ["runs"]
    # A filter that is not valid is left out, as the page leaves it out.
    found = rows(client, id=["ran", "runs"], status="no-such-status")
    assert {r["id"] for r in found["rows"]} == {"ran", "runs"}


def test_newer_sessions_not_shown_are_counted(client: Client, alice: User, bob: User) -> None:
    shown = make("shown", owner=alice, at=1_000.0)
    make("older", owner=alice, at=500.0)
    make("newer-1", owner=alice, at=1_500.0)
    make("newer-2", owner=alice, at=1_000.0)  # the same time, an id before "shown": older
    make("newer-3", owner=alice, at=3_000.0, app="data_agent")
    make("bobs", owner=bob, at=9_000.0)
    client.force_login(alice)

    assert rows(client, id=["shown"], since=cursor(shown))["newer"] == 2  # newer-1, newer-3
    assert rows(client, id=["shown"], since=cursor(shown), agent="data_agent")["newer"] == 1
    assert rows(client, since="start")["newer"] == 5  # a page that shows none: all of hers
    assert rows(client, id=["shown"])["newer"] == 0  # no since: a later page counts none


def test_the_count_of_newer_ones_is_capped(client: Client, alice: User) -> None:
    for n in range(NEWER_COUNTED_MAX + 5):
        make(f"many-{n:03d}", owner=alice, at=2_000.0 + n)
    client.force_login(alice)
    found = rows(client, since="start")
    assert found["newer"] == found["newer_max"] == NEWER_COUNTED_MAX


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"id": [f"s{n}" for n in range(REFRESH_IDS_MAX + 1)]}, "id"),
        ({"since": "yesterday"}, "since"),
        ({"since": "nan:x"}, "since"),
        ({"since": "1.0:"}, "since"),
    ],
)
def test_bad_parameters_are_a_400_naming_them(
    client: Client, alice: User, query: dict[str, Any], field: str
) -> None:
    client.force_login(alice)
    response = client.get(f"{URL}?{urlencode(query, doseq=True)}")
    assert response.status_code == 400
    assert response.json()["error"]["field"] == field


@pytest.mark.parametrize("hostile", ["\ud800", "x" * 100_000, "<script>", "'; --", "%00"])
def test_hostile_ids_and_filters_find_nothing_and_break_nothing(
    client: Client, alice: User, hostile: str
) -> None:
    """(A NUL anywhere in a query is refused for the whole site: ``core.middleware``.)"""
    make("plain", owner=alice)
    client.force_login(alice)
    as_sent = hostile.encode("utf-8", "surrogatepass")  # a lone surrogate: its UTF-8 bytes
    query = urlencode(
        {"id": [b"plain", as_sent], "q": as_sent[:200], "owner": as_sent[:150]}, doseq=True
    )
    response = client.get(f"{URL}?{query}")
    assert response.status_code == 200, response.content
    assert all(r["id"] == "plain" for r in response.json()["rows"])


def test_anonymous_readers_are_sent_to_log_in(client: Client) -> None:
    response = client.get(URL)
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_the_list_page_gives_each_row_its_cursor_and_the_live_parts(
    client: Client, alice: User
) -> None:
    a = make("paged", owner=alice, at=1_234.5)
    client.force_login(alice)
    html = client.get("/").content.decode()
    assert f'data-cursor="{cursor(a)}"' in html
    assert 'id="list-live"' in html and 'id="list-news"' in html


def test_a_nul_in_the_query_is_refused_as_everywhere(client: Client, alice: User) -> None:
    client.force_login(alice)
    assert client.get(f"{URL}?id=a%00b").status_code == 400
