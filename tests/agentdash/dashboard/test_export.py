"""Downloads of a session (docs/EXPORT.md): the session document and its spans as OTLP/JSON
— what they hold, how they are sent, that they are read batch by batch, and that whatever
the rows hold they are valid JSON (and OTLP a receiver loads)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.agent_sessions.services import session_state_update
from agentdash.core.hygiene import TOO_DEEP
from agentdash.dashboard.exports.session_export import (
    FORMAT,
    MAX_DEPTH,
    session_json_parts,
    session_otlp_parts,
)
from agentdash.runs.models import Run
from agentdash.spans.models import Span
from agentdash.spans.selectors import span_detail
from agentdash.spans.services import spans_store
from agentdash.spans.span_version import SpanVersion
from runtime import Event, EventActions
from tests.agentdash.otlp_receiver import otlp_parse, otlp_print, strict_json
from tests.agentdash.stored import session_of, store_event

pytestmark = pytest.mark.django_db

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN_FIELDS = ("trace_id", "span_id", "parent_span_id", "name", "kind", "start_time", "end_time",
               "status", "status_message", "attributes", "events", "run_id", "otlp",
               "source_id")  # fmt: skip
OTHER_TRACE = "5b8efff798038103d269b633813fc60c"


def url(name: str, session: AgentSession, **kwargs: str) -> str:
    return reverse(f"dashboard:{name}", kwargs={"session_id": session.id, **kwargs})


def body_of(response: Any) -> bytes:
    assert response.streaming, "an export is streamed, never built whole"
    return b"".join(response.streaming_content)


def spans_of(session: AgentSession, count: int, trace_id: str = TRACE, first: int = 0) -> None:
    spans_store(
        versions=[
            SpanVersion(
                trace_id=trace_id,
                span_id=f"{first + i + 1:016x}",
                parent_span_id="" if i == 0 else f"{first + 1:016x}",
                name=f"step {first + i}",
                start_time=1_000_000 + (first + i) * 1_000,
                end_time=1_000_000 + (first + i) * 1_000 + 500,
                session_id=session.id,
                attributes={"gen_ai.agent.name": "capital_agent", "n": i},
            )
            for i in range(count)
        ]
    )


@pytest.fixture
def session(alice: User) -> AgentSession:
    """Alice's session: a run, a user message, an agent's state change, an operator's edit,
    and spans of two traces."""
    found = session_of(alice, "export-1", app_name="capital_agent")
    Run.objects.create(
        session=found,
        agent_name="capital_agent",
        invocation_id="inv-1",
        status=Run.Status.SUCCEEDED,
        message={"role": "user", "parts": [{"text": "Capital of France?"}]},
        requested_by=alice,
        trace_id=TRACE,
    )
    store_event(found.id, "Capital of France?")
    store_event(
        found.id,
        "Paris.",
        author="capital_agent",
        actions=EventActions(state_delta={"last_country": "France", "user:visits": 1}),
    )
    session_state_update(
        session_id=found.id,
        delta={"last_country": "Spain"},
        expected_version=2,
        actor=alice,
        reason="checking the instruction",
    )
    spans_of(found, 3)
    spans_of(found, 2, trace_id=OTHER_TRACE, first=10)
    return found


def test_the_session_document_holds_the_session_its_state_runs_events_history_and_spans(
    client: Client, alice: User, session: AgentSession
) -> None:
    client.force_login(alice)
    document = strict_json(body_of(client.get(url("session_export", session))))

    assert document["format"] == FORMAT == "agentdash.session/1"
    assert document["session"] == {
        "id": "export-1",
        "app_name": "capital_agent",
        "user_id": str(alice.pk),
        "owner": "alice",
        "title": "",
        "created_at": session.created_at.isoformat(),
        "last_update_time": AgentSession.objects.get(pk=session.pk).last_update_time,
        "version": 3,
        "event_count": 3,
    }
    assert document["state"] == {"last_country": "Spain", "user:visits": 1}
    assert document["state_versions"] == {"session": 3, "app": 0, "user": 1}
    (run,) = document["runs"]
    assert run["agent"] == "capital_agent" and run["status"] == "succeeded"
    assert run["requested_by"] == "alice" and run["trace_id"] == TRACE
    assert run["message"]["parts"] == [{"text": "Capital of France?"}]

    events = document["events"]
    assert [e["position"] for e in events] == [1, 2, 3]
    assert [e["author"] for e in events] == ["user", "capital_agent", "operator"]
    stored = SessionEvent.objects.get(session=session, seq=2)
    assert events[1]["data"] == stored.data  # the event whole, as the runtime serializes it
    assert Event.model_validate(events[1]["data"]).actions.state_delta["last_country"] == "France"

    history = document["state_history"]
    assert [(h["position"], h["author"], h["version"]) for h in history] == [
        (2, "capital_agent", 2),
        (3, "operator", 3),
    ]
    assert history[0]["delta"] == {"last_country": "France", "user:visits": 1}
    assert "actor" not in history[0]
    assert history[1]["delta"] == {"last_country": "Spain"}
    assert (history[1]["actor"], history[1]["reason"]) == ("alice", "checking the instruction")

    spans = document["spans"]
    assert len(spans) == 5
    assert [s["start_time"] for s in spans] == sorted(s["start_time"] for s in spans)
    first = spans[0]
    detail = span_detail(session_id=session.id, trace_id=TRACE, span_id=first["span_id"])
    assert detail is not None
    assert list(first) == list(SPAN_FIELDS)
    assert first == {k: detail[k] for k in SPAN_FIELDS}  # as a span change carries them


def test_a_download_is_a_streamed_json_attachment_never_cached(
    client: Client, alice: User, session: AgentSession
) -> None:
    client.force_login(alice)
    for name, kwargs, filename in (
        ("session_export", {}, "agentdash-session-export-1.json"),
        ("session_export_otlp", {}, "agentdash-session-export-1.otlp.json"),
        ("session_export_trace", {"trace_id": TRACE}, f"agentdash-trace-{TRACE}.otlp.json"),
    ):
        response = client.get(url(name, session, **kwargs))
        assert response.status_code == 200
        assert response["Content-Type"] == "application/json"
        assert response["Content-Disposition"] == f'attachment; filename="{filename}"'
        assert response["X-Content-Type-Options"] == "nosniff"
        assert "no-store" in response["Cache-Control"]
        strict_json(body_of(response))


def test_a_session_id_outside_the_alphabet_makes_a_plain_file_name(
    client: Client, alice: User
) -> None:
    odd = session_of(alice, 'a/b"c\\d; x:y', app_name="capital_agent")
    client.force_login(alice)
    response = client.get(url("session_export", odd))
    assert response.status_code == 200
    disposition = response["Content-Disposition"]
    assert disposition == 'attachment; filename="agentdash-session-a_b_c_d_x_y.json"'
    assert strict_json(body_of(response))["session"]["id"] == 'a/b"c\\d; x:y'


def test_every_trace_as_otlp_loads_in_an_otlp_parser(
    client: Client, alice: User, session: AgentSession
) -> None:
    client.force_login(alice)
    text = body_of(client.get(url("session_export_otlp", session)))
    message = otlp_parse(text)
    (resource,) = message.resource_spans
    assert {kv.key: kv.value.string_value for kv in resource.resource.attributes} == {
        "service.name": "capital_agent",
        "agentdash.session.id": "export-1",
    }
    spans = resource.scope_spans[0].spans
    assert len(spans) == 5
    stored = {(s.trace_id, s.span_id): s for s in Span.objects.filter(session=session)}
    for span in spans:
        row = stored[(span.trace_id.hex(), span.span_id.hex())]  # the ids survived
        assert span.name == row.name
        assert span.start_time_unix_nano == row.start_time
        assert span.end_time_unix_nano == row.end_time
    assert otlp_print(message) == json.loads(text)


def test_one_trace_as_otlp_holds_only_that_trace(
    client: Client, alice: User, session: AgentSession
) -> None:
    client.force_login(alice)
    message = otlp_parse(body_of(client.get(url("session_export_trace", session, trace_id=TRACE))))
    spans = message.resource_spans[0].scope_spans[0].spans
    assert [s.name for s in spans] == ["step 0", "step 1", "step 2"]
    assert {s.trace_id.hex() for s in spans} == {TRACE}
    assert spans[1].parent_span_id == spans[0].span_id


def test_a_trace_the_session_does_not_have_is_a_404(
    client: Client, alice: User, bob: User, session: AgentSession
) -> None:
    bobs = session_of(bob, "export-bob", app_name="capital_agent")
    spans_of(bobs, 1, trace_id="6e0c63257de34c92bf9efcd03927272e")
    client.force_login(alice)
    for trace_id in ("6e0c63257de34c92bf9efcd03927272e", "0" * 32, "not-a-trace"):
        response = client.get(url("session_export_trace", session, trace_id=trace_id))
        assert response.status_code == 404, trace_id


def test_someone_elses_session_is_the_pages_404_and_an_operator_may_export_it(
    client: Client, bob: User, operator_user: User, session: AgentSession
) -> None:
    client.force_login(bob)
    page = client.get(url("session", session))
    assert page.status_code == 404
    for name, kwargs in (
        ("session_export", {}),
        ("session_export_otlp", {}),
        ("session_export_trace", {"trace_id": TRACE}),
    ):
        response = client.get(url(name, session, **kwargs))
        assert response.status_code == 404
        assert response.content == page.content  # the same answer: the id is not confirmed
    client.force_login(operator_user)
    assert client.get(url("session_export", session)).status_code == 200


def test_the_parts_come_one_query_each_and_every_span_comes_once(alice: User) -> None:
    big = session_of(alice, "export-big", app_name="capital_agent")
    spans_of(big, 23)
    for i in range(7):
        store_event(big.id, f"message {i}")
    parts = session_json_parts(session=big, batch=5)
    texts = []
    while True:
        with CaptureQueriesContext(connection) as queries:
            part = next(parts, None)
        if part is None:
            break
        assert len(queries) <= 4, f"a part made {len(queries)} queries"  # the head: 4 reads
        texts.append(part)
    document = strict_json("".join(texts))
    assert [s["name"] for s in document["spans"]] == [f"step {i}" for i in range(23)]
    assert [e["position"] for e in document["events"]] == list(range(1, 8))
    # 23 spans in batches of 5 are 5 parts of spans; 7 events 2 parts: the text is written
    # as it is read.
    assert sum(1 for t in texts if '"name":"step' in t) == 5
    otlp = list(session_otlp_parts(session=big, batch=5))
    assert len(otlp) == 1 + 5 + 1
    assert len(otlp_parse("".join(otlp)).resource_spans[0].scope_spans[0].spans) == 23


def test_a_span_stored_while_the_export_is_read_comes_once_or_not_at_all(alice: User) -> None:
    growing = session_of(alice, "export-growing", app_name="capital_agent")
    spans_of(growing, 6)
    parts = session_otlp_parts(session=growing, batch=4)
    head, first = next(parts), next(parts)
    spans_of(growing, 3, first=100)  # starts after every span read so far
    rest = "".join(parts)
    names = [s.name for s in otlp_parse(head + first + rest).resource_spans[0].scope_spans[0].spans]
    assert names == [f"step {i}" for i in range(6)] + ["step 100", "step 101", "step 102"]


NUL, SURROGATE = "\x00", "\ud800"
MARKUP = "<img src=x onerror=alert(1)>"
HOSTILE = f"{MARKUP}{NUL}{SURROGATE}"  # a lone surrogate: JSON columns only (escaped)
SHOWN = f"{MARKUP}\ufffd\ufffd"


def deep(levels: int) -> Any:
    value: Any = "bottom"
    for _ in range(levels):
        value = {"k": [value]}
    return value


@pytest.mark.sqlite_only  # the PostgreSQL pass leaves it out; run there by hand, it skips
@pytest.mark.skipif(
    "connection.vendor != 'sqlite'",
    reason="rows only SQLite can hold (PostgreSQL refuses NUL and lone surrogates)",
)
def test_rows_holding_what_the_write_paths_never_store_still_export_as_valid_json(
    client: Client, alice: User
) -> None:
    """The write paths store nothing of this (core.hygiene); rows written by other means
    — a restore, a hand-made fixture — may: the export stays valid whatever they hold."""
    odd = session_of(alice, "export-hostile", app_name="capital_agent")
    AgentSession.objects.filter(pk=odd.pk).update(state={HOSTILE: [HOSTILE, deep(300)]})
    Span.objects.create(
        trace_id=TRACE,
        span_id="00f067aa0ba902b7",
        name=f"{MARKUP}{NUL}",
        start_time=1,
        status="error",
        status_message=f"{MARKUP}{NUL}",
        attributes={HOSTILE: HOSTILE, "deep": deep(300), "huge": "x" * 1_000_000},
        events=[{"name": HOSTILE, "time": 2, "attributes": {"a": SURROGATE}}],
        session=odd,
    )
    SessionEvent.objects.create(
        session=odd, seq=1, event_id="e1", author="user", timestamp=1.0, version=1,
        state_delta_keys=["k"], data={"text": HOSTILE, "actions": {"state_delta": {
            HOSTILE: [SURROGATE]}}, "deep": deep(300)},
    )  # fmt: skip
    client.force_login(alice)

    document = strict_json(body_of(client.get(url("session_export", odd))))
    assert list(document["state"]) == [SHOWN] and document["state"][SHOWN][0] == SHOWN
    # 600 levels: cut at MAX_DEPTH (rows the write paths store are far shallower).
    assert json.dumps(document["state"]).count('"k"') == (MAX_DEPTH - 2) // 2
    assert TOO_DEEP in json.dumps(document["state"])
    (span,) = document["spans"]
    assert span["name"] == f"{MARKUP}\ufffd"
    assert span["attributes"][SHOWN] == SHOWN
    assert span["events"][0]["attributes"] == {"a": "\ufffd"}
    assert len(span["attributes"]["huge"]) == 1_000_000
    assert document["events"][0]["data"]["text"] == SHOWN
    assert document["state_history"][0]["delta"] == {SHOWN: ["\ufffd"]}

    message = otlp_parse(body_of(client.get(url("session_export_otlp", odd))))
    (got,) = message.resource_spans[0].scope_spans[0].spans
    assert got.name == got.status.message == f"{MARKUP}\ufffd"
    assert {kv.key for kv in got.attributes} == {SHOWN, "deep", "huge"}
