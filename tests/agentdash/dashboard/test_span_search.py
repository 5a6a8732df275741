"""Finding a session's spans by what only the database holds: attribute values and span
events (``GET /sessions/<id>/spans/search/?q=``; the timeline matches names itself)."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agentdash.agent_sessions.models import AgentSession
from agentdash.spans.search import LIMIT_DEFAULT, TEXT_MAX, span_search
from agentdash.spans.services import spans_store
from agentdash.spans.span_version import SpanVersion
from tests.agentdash.dashboard.test_data_views import TRACE, get, url
from tests.agentdash.stored import session_of

pytestmark = pytest.mark.django_db

ARGS = "gen_ai.tool.call.arguments"


def span(session: AgentSession, n: int, **fields: object) -> SpanVersion:
    return SpanVersion(
        trace_id=TRACE, span_id=f"{n:016x}", name=f"step {n}", start_time=1_000 + n,
        end_time=2_000 + n, session_id=session.id, **fields,  # type: ignore[arg-type]
    )  # fmt: skip


@pytest.fixture
def session(alice: User) -> AgentSession:
    return session_of(alice, "span-search-1", app_name="capital_agent")


@pytest.fixture
def stored(session: AgentSession) -> AgentSession:
    spans_store(
        versions=[
            span(session, 1, attributes={ARGS: json.dumps({"city": 'Zürich "old town"'})}),
            span(session, 2, attributes={"note": "Café au lait, 100% arabica"}),
            span(session, 3, events=[{"name": "retry", "attributes": {"why": "rate limited"}}]),
            span(session, 4, status="error", status_message="upstream timed out"),
            span(session, 5, attributes={"note": "nothing to see"}),
        ]
    )
    return session


def found(session: AgentSession, text: str, **kwargs: int) -> list[str]:
    return [span_id for _, span_id in span_search(session_id=session.id, text=text, **kwargs).keys]


@pytest.mark.parametrize(
    ("text", "spans"),
    [
        ("zürich", [1]),  # inside a JSON-serialized value, non-ASCII, other case
        ("ZÜRICH", [1]),
        ('"old town"', [1]),  # quotes, escaped twice in the stored text
        ("café", [2]),
        ("CAFÉ AU", [2]),
        ("100%", [2]),  # LIKE's wildcards are plain characters here
        ("10_%", []),
        ("rate limited", [3]),  # a span event's attribute
        ("TIMED OUT", [4]),  # the status message
        ("step 5", [5]),  # the name
        ("city", [1]),  # keys count too
        ("absent", []),
    ],
)
def test_text_is_found_wherever_the_span_keeps_it(
    stored: AgentSession, text: str, spans: list[int]
) -> None:
    assert found(stored, text) == [f"{n:016x}" for n in spans]


def test_only_the_sessions_own_spans_are_found(alice: User, stored: AgentSession) -> None:
    other = session_of(alice, "span-search-2", app_name="capital_agent")
    spans_store(versions=[SpanVersion(trace_id="a" * 32, span_id="b" * 16, name="café",
                                      start_time=1, session_id=other.id)])  # fmt: skip
    assert found(stored, "café") == [f"{2:016x}"]
    assert found(other, "café") == ["b" * 16]


def test_many_matches_are_cut_at_the_limit_in_start_order(stored: AgentSession) -> None:
    result = span_search(session_id=stored.id, text="step", limit=2)
    assert [s for _, s in result.keys] == [f"{1:016x}", f"{2:016x}"]
    assert result.truncated is True
    assert span_search(session_id=stored.id, text="step", limit=5).truncated is False


def test_a_search_that_stops_at_2000_says_so_and_how_to_narrow_it(
    client: Client, alice: User, session: AgentSession
) -> None:
    assert LIMIT_DEFAULT == 2_000
    spans_store(versions=[span(session, n, attributes={"q": "needle"}) for n in range(1, 2_002)])
    client.force_login(alice)
    status, body = get(client, url("session_span_search", session), q="needle")
    assert status == 200
    assert len(body["keys"]) == 2_000 and body["keys"][-1] == [TRACE, f"{2_000:016x}"]
    assert (body["truncated"], body["limit"]) == (True, 2_000)
    assert body["notice"] == (
        "The search stopped at 2,000 matching spans (the first ones, in start order); more "
        "spans match. Type more of the text to narrow it."
    )
    # A limit asked for is the one said.
    status, body = get(client, url("session_span_search", session), q="needle", limit="3")
    assert (len(body["keys"]), body["limit"]) == (3, 3)
    assert body["notice"].startswith("The search stopped at 3 matching spans")
    # Every match returned: nothing to say.
    status, body = get(client, url("session_span_search", session), q="step 2001")
    assert (body["truncated"], body["notice"]) == (False, None)


def test_the_view_answers_keys_and_refuses_what_it_cannot_look_for(
    client: Client, alice: User, stored: AgentSession
) -> None:
    client.force_login(alice)
    status, body = get(client, url("session_span_search", stored), q="Zürich")
    assert status == 200
    assert body == {
        "q": "Zürich",
        "keys": [[TRACE, f"{1:016x}"]],
        "truncated": False,
        "limit": LIMIT_DEFAULT,
        "notice": None,
    }
    status, body = get(client, url("session_span_search", stored), q="x" * (TEXT_MAX + 1))
    assert status == 400 and body["error"]["field"] == "q"
    # Markup is text to look for, and comes back as JSON data.
    status, body = get(client, url("session_span_search", stored), q="<script>alert(1)</script>")
    assert status == 200 and body["keys"] == [] and body["q"] == "<script>alert(1)</script>"


def test_text_is_found_however_its_json_was_written(session: AgentSession) -> None:
    """The batch store writes JSON as it is, the ORM with ASCII escapes (on SQLite): a quoted
    non-ASCII word inside a serialized value is found in both."""
    from agentdash.spans.services import span_upsert

    attributes = {ARGS: json.dumps({"q": 'say "Zoë" twice'}, ensure_ascii=False)}
    spans_store(versions=[span(session, 6, attributes=attributes)])
    row = span(session, 7, attributes=attributes)
    span_upsert(
        trace_id=row.trace_id, span_id=row.span_id, name=row.name, start_time=row.start_time,
        end_time=row.end_time, attributes=attributes, session_id=session.id,
    )  # fmt: skip
    assert found(session, '"zoë"') == [f"{n:016x}" for n in (6, 7)]
    assert found(session, "ZOË") == [f"{n:016x}" for n in (6, 7)]
