"""The session page's data over HTTP: snapshot, span summaries page by page, one span in
full, older chat events (docs/PROTOCOL.md, "Pages over HTTP")."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from google.genai import types

from agentdash.agent_sessions.models import AgentSession
from agentdash.agent_sessions.session_service import DjangoSessionService
from agentdash.changes.selectors import session_last_seq
from agentdash.dashboard.session.selectors import SNAPSHOT_EVENTS
from agentdash.runs.models import Run
from agentdash.runs.selectors import session_runs_latest
from agentdash.spans.services import spans_store
from agentdash.spans.span_version import SpanVersion
from agentdash.spans.summaries import SUMMARY_FIELDS
from runtime import Event
from tests.agentdash.stored import session_of

pytestmark = pytest.mark.django_db

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def url(name: str, session: AgentSession, **kwargs: str) -> str:
    return reverse(f"dashboard:{name}", kwargs={"session_id": session.id, **kwargs})


def get(client: Client, path: str, **params: Any) -> tuple[int, Any]:
    response = client.get(path, params, HTTP_ACCEPT_ENCODING="gzip")
    body = response.content
    if response.get("Content-Encoding") == "gzip":
        body = gzip.decompress(body)
    return response.status_code, json.loads(body)


def spans_of(session: AgentSession, count: int, **attributes: Any) -> list[SpanVersion]:
    """``count`` spans under one root, started 1 µs apart, the last still running."""
    versions = [
        SpanVersion(
            trace_id=TRACE,
            span_id=f"{i + 1:016x}",
            parent_span_id="" if i == 0 else f"{1:016x}",
            name=f"step {i}",
            start_time=1_000_000 + i * 1_000,
            end_time=None if i == count - 1 else 1_000_000 + i * 1_000 + 500,
            session_id=session.id,
            attributes=dict(attributes),
        )
        for i in range(count)
    ]
    spans_store(versions=versions)
    return versions


@pytest.fixture
def session(alice: User) -> AgentSession:
    return session_of(alice, "data-views-1", app_name="capital_agent")


def as_dicts(body: dict[str, Any]) -> list[dict[str, Any]]:
    assert body["fields"] == list(SUMMARY_FIELDS)
    return [dict(zip(body["fields"], row, strict=True)) for row in body["rows"]]


def test_span_pages_cover_every_span_once_in_start_order(
    client: Client, alice: User, session: AgentSession
) -> None:
    spans_of(session, 25)
    client.force_login(alice)
    seen: list[dict[str, Any]] = []
    after = None
    pages = 0
    while True:
        params = {"limit": "10"} | ({"after": after} if after else {})
        status, body = get(client, url("session_spans", session), **params)
        assert status == 200
        seen += as_dicts(body)
        pages += 1
        after = body["next"]
        if after is None:
            break
    assert pages == 3
    assert [s["span_id"] for s in seen] == [f"{i + 1:016x}" for i in range(25)]
    assert seen[0]["parent_span_id"] is None and seen[1]["parent_span_id"] == f"{1:016x}"
    assert seen[-1]["end_time"] is None and seen[0]["end_time"] == 1_000_500
    assert all(s["seq"] > 0 for s in seen)


def test_a_summary_carries_what_a_row_shows_and_no_attributes(
    client: Client, alice: User, session: AgentSession
) -> None:
    spans_store(
        versions=[
            SpanVersion(
                trace_id=TRACE,
                span_id="a" * 16,
                name="generate_content gemini-2.5-flash",
                start_time=5,
                end_time=9,
                status="error",
                status_message="boom " * 200,
                session_id=session.id,
                attributes={
                    "agentdash.span.kind": "model",
                    "gen_ai.request.model": "gemini-2.5-flash",
                    "gen_ai.usage.input_tokens": 50,
                    "gen_ai.usage.output_tokens": 3,
                    "agentdash.model.offline": True,
                    "gen_ai.input.messages": "x" * 10_000,
                },
            ),
            SpanVersion(
                trace_id=TRACE,
                span_id="b" * 16,
                name="callback before_model",
                start_time=6,
                end_time=7,
                session_id=session.id,
                attributes={
                    "agentdash.callback.name": "block_keyword_guardrail",
                    "agentdash.callback.hook": "before_model",
                    "agentdash.callback.outcome": "overridden",
                    "agentdash.guardrail.name": "block_keyword_guardrail",
                    "agentdash.guardrail.decision": "blocked",
                    "agentdash.guardrail.reason": "the request mentions BLOCK",
                },
            ),
            SpanVersion(
                trace_id=TRACE,
                span_id="c" * 16,
                name="execute_tool get_capital",
                start_time=7,
                session_id=session.id,
                attributes={"gen_ai.tool.name": "get_capital", "agentdash.cancelled": True},
            ),
        ]
    )
    client.force_login(alice)
    status, body = get(client, url("session_spans", session))
    assert status == 200
    model, callback, tool = as_dicts(body)
    assert model["span_kind"] == "model" and model["label"] == "gemini-2.5-flash"
    assert (model["tokens_in"], model["tokens_out"], model["offline"]) == (50, 3, True)
    assert model["status"] == "error" and len(model["status_message"]) == 500
    assert callback["span_kind"] == "callback" and callback["label"] == "block_keyword_guardrail"
    assert (callback["hook"], callback["outcome"]) == ("before_model", "overridden")
    assert callback["tokens_in"] is None and callback["offline"] is False
    assert (callback["decision"], model["decision"], tool["decision"]) == ("blocked", "", "")
    assert tool["span_kind"] == "tool" and tool["label"] == "get_capital"
    assert tool["cancelled"] is True and model["cancelled"] is False
    assert "x" * 100 not in json.dumps(body)


def test_one_span_in_full_only_within_its_session(
    client: Client, alice: User, bob: User, session: AgentSession
) -> None:
    spans_of(session, 2, **{"gen_ai.tool.call.arguments": '{"country": "<b>France</b>"}'})
    client.force_login(alice)
    status, body = get(client, url("session_span", session, trace_id=TRACE, span_id=f"{2:016x}"))
    assert status == 200
    assert body["attributes"]["gen_ai.tool.call.arguments"] == '{"country": "<b>France</b>"}'
    assert body["end_time"] is None and body["seq"] == 2
    other = session_of(bob, "data-views-2", app_name="capital_agent")
    client.force_login(bob)
    status, body = get(client, url("session_span", other, trace_id=TRACE, span_id=f"{2:016x}"))
    assert status == 404 and body["error"]["code"] == "not_found"


def append_texts(session: AgentSession, texts: list[str]) -> None:
    service = DjangoSessionService()
    stored = service.get_session(
        app_name=session.app_name, user_id=session.user_id, session_id=session.id
    )
    assert stored is not None
    for i, text in enumerate(texts):
        event = Event(
            invocation_id=f"inv-{i}",
            author="user" if i % 2 == 0 else "capital_agent",
            content=types.Content(role="user", parts=[types.Part(text=text)]),
        )
        service.append_event(stored, event)


def test_events_come_latest_first_then_older_pages(
    client: Client, alice: User, session: AgentSession
) -> None:
    append_texts(session, [f"message {i} <script>x()</script>" for i in range(120)])
    client.force_login(alice)
    status, snapshot = get(client, url("session_snapshot", session))
    assert status == 200
    latest = snapshot["events"]
    assert len(latest) == SNAPSHOT_EVENTS == 20
    assert "message 119" in latest[-1]["html"] and "message 100" in latest[0]["html"]
    assert "<script" not in json.dumps(latest)  # rendered safe when stored
    texts: list[str] = []
    before = snapshot["events_before"]
    while before is not None:
        status, page = get(client, url("session_events", session), before=str(before))
        assert status == 200 and page["events"]
        texts = [e["html"] for e in page["events"]] + texts
        assert page["events"][-1]["position"] < before
        before = page["before"]
    assert len(texts) == 100
    assert "message 0 " in texts[0] and "message 99 " in texts[-1]


def test_events_read_down_again_from_any_position(
    client: Client, alice: User, session: AgentSession
) -> None:
    """A chat that read back to its first message and dropped its newest comes down again
    page by page after a position, each event once, until a page says it reaches the end."""
    append_texts(session, [f"message {i}" for i in range(120)])
    client.force_login(alice)
    positions: list[int] = []
    after: int | None = 0
    while after is not None:
        status, page = get(client, url("session_events", session), after=str(after), limit="50")
        assert status == 200 and page["events"]
        found = [e["position"] for e in page["events"]]
        assert found == sorted(found) and found[0] > after
        assert page["before"] == (None if found[0] == 1 else found[0])
        positions += found
        after = page["after"]
        assert after is None or after == found[-1]
    assert positions == list(range(1, 121))
    status, page = get(client, url("session_events", session), after="120")
    assert status == 200 and page == {"events": [], "before": None, "after": None}
    status, page = get(client, url("session_events", session), after="1", before="9")
    assert status == 400 and page["error"]["field"] == "after"


def test_the_snapshot_says_where_the_socket_goes_on_from(
    client: Client, alice: User, operator_user: User, session: AgentSession
) -> None:
    spans_of(session, 3)
    Run.objects.create(
        session=session, agent_name="capital_agent", invocation_id="inv-1", message={}
    )
    client.force_login(alice)
    status, body = get(client, url("session_snapshot", session))
    assert status == 200
    assert body["seq"] == session_last_seq(session_id=session.id) >= 3
    assert body["spans_total"] == 3
    assert [run["invocation_id"] for run in body["runs"]] == ["inv-1"]
    assert body["runs_more"] is False and body["events_before"] is None
    assert "state" not in body  # alice may not edit state
    client.force_login(operator_user)
    status, body = get(client, url("session_snapshot", session))
    assert status == 200 and body["state"] == {} and body["version"] == 0


@pytest.mark.parametrize(
    ("name", "query", "field"),
    [
        ("session_spans", "limit=0", "limit"),
        ("session_spans", "limit=10001", "limit"),
        ("session_spans", "limit=ten", "limit"),
        ("session_spans", "limit=%EF%BC%95", "limit"),  # a full-width digit
        ("session_spans", "after=nonsense", "after"),
        ("session_spans", "after=1.2%00", "after"),
        ("session_events", "before=-1", "before"),
        ("session_events", "limit=201", "limit"),
        ("session_events", "before=%ED%A0%80", "before"),  # a lone surrogate, UTF-8 style
        ("session_span_search", "", "q"),
        ("session_span_search", "q=+++", "q"),
        ("session_span_search", "q=" + "x" * 201, "q"),
        ("session_span_search", "q=tool&limit=0", "limit"),
        ("session_span_search", "q=tool&limit=10001", "limit"),
        ("session_span_search", "q=%00", "q"),
    ],
)
def test_a_bad_parameter_is_a_400_naming_it(
    client: Client, alice: User, session: AgentSession, name: str, query: str, field: str
) -> None:
    client.force_login(alice)
    response = client.get(f"{url(name, session)}?{query}")
    assert response.status_code == 400
    if response["Content-Type"] == "application/json":
        error = response.json()["error"]
        assert error["code"] == "bad_request" and error["field"] == field
    else:  # a NUL or a lone surrogate: refused for every page, before any view
        assert f"'{field}'" in response.content.decode()


def test_the_page_tells_its_scripts_where_the_data_is(
    client: Client, alice: User, session: AgentSession
) -> None:
    client.force_login(alice)
    page = client.get(url("session", session)).content.decode()
    assert f'"data_path": "/sessions/{session.id}/"' in page


def test_older_runs_still_active_come_with_the_latest(session: AgentSession) -> None:
    """A run the page is not sent has ended: the timeline stops the clocks of its spans."""

    def run(status: str) -> Run:
        return Run.objects.create(
            session=session, agent_name="capital_agent", message={}, status=status,
            invocation_id=f"i-{Run.objects.count()}",
        )  # fmt: skip

    stuck = run(Run.Status.RUNNING)
    run(Run.Status.SUCCEEDED)
    later = [run(Run.Status.SUCCEEDED), run(Run.Status.QUEUED)]
    runs, more = session_runs_latest(session_id=session.id, limit=2)
    assert [r["id"] for r in runs] == [stuck.pk] + [r.pk for r in later]
    assert more is True
    runs, more = session_runs_latest(session_id=session.id, limit=10)
    assert len(runs) == 4 and more is False
