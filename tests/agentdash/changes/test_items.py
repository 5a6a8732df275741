"""Rows as change items: every stored event gets a seq with it, texts are sanitized, big
payloads are cut, and a page never runs past its limit."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from google.genai import types

from agentdash.agent_sessions.change_items import event_item
from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.agent_sessions.services import session_state_update
from agentdash.changes.items import MAX_PAYLOAD_CHARS, items_after
from agentdash.changes.models import SessionChange
from runtime.events.event import Event
from tests.agentdash.migrations import migrated_back_to
from tests.agentdash.stored import store_event

pytestmark = pytest.mark.django_db

MakeSession = Callable[[str], AgentSession]


def test_every_stored_event_and_operator_edit_gets_the_next_seq(
    make_session: MakeSession, operator_user: User
) -> None:
    make_session("s1")
    first = store_event("s1", "hello")
    edit = session_state_update(
        session_id="s1", delta={"k": 1}, expected_version=1, actor=operator_user, reason="why"
    )
    changes = SessionChange.objects.filter(session_id="s1").order_by("seq")
    assert [(c.seq, c.kind, c.ref) for c in changes] == [
        (1, "event", first.id),
        (2, "event", edit.event_id),
    ]
    items = items_after(session_id="s1", after_seq=0, limit=10)
    assert [i["data"]["author"] for i in items] == ["user", "operator"]
    assert items[1]["data"]["reason"] == "why"
    assert [i["seq"] for i in items_after(session_id="s1", after_seq=0, limit=1)] == [1]
    assert items_after(session_id="s1", after_seq=2, limit=10) == []


def test_a_refused_edit_records_no_change(make_session: MakeSession) -> None:
    make_session("s1")
    with pytest.raises(ValueError):
        session_state_update(
            session_id="s1", delta={"temp:x": 1}, expected_version=0, actor=None, reason="r"
        )
    assert not SessionChange.objects.exists()


def test_event_text_is_sanitized_and_big_payloads_are_cut(make_session: MakeSession) -> None:
    make_session("s1")
    store_event(
        "s1",
        '<script>alert(1)</script><a href="javascript:x">y</a> [ok](https://example.com)',
    )
    big = {"blob": "x" * (MAX_PAYLOAD_CHARS + 1)}
    response = types.FunctionResponse(id="c1", name="dump", response=big)
    event = Event(
        author="bot",
        content=types.Content(role="user", parts=[types.Part(function_response=response)]),
    )
    from agentdash.agent_sessions._state_store import event_append
    from agentdash.agent_sessions.event_data import event_serialize

    event_append(session_id="s1", event_data=event_serialize(event))
    first, second = SessionEvent.objects.order_by("seq")
    html = event_item(first)["html"]
    assert html.startswith("<p>&lt;script&gt;alert(1)&lt;/script&gt;&lt;a href=")  # as text
    assert "<script" not in html and '<a href="javascript' not in html
    assert 'rel="noopener noreferrer nofollow">ok</a> <span>(example.com ↗)</span>' in html
    cut = event_item(second)["function_responses"][0]["response"]
    assert cut["truncated"] is True and len(cut["json"]) == MAX_PAYLOAD_CHARS
    assert event_item(second)["final"] is False


def test_event_text_is_rendered_once_when_stored_thoughts_left_out(
    make_session: MakeSession,
) -> None:
    from agentdash.agent_sessions._state_store import event_append
    from agentdash.agent_sessions.event_data import event_serialize, event_text

    make_session("s1")
    event = Event(
        author="bot",
        content=types.Content(
            role="model",
            parts=[
                types.Part(text="secret plan", thought=True),
                types.Part(text="**Paris**"),
                types.Part(text=" <b>x</b>"),
            ],
        ),
    )
    data = event_serialize(event)
    assert event_text(data) == event.text == "**Paris** <b>x</b>"
    event_append(session_id="s1", event_data=data)
    row = SessionEvent.objects.get()
    assert row.html == "<p><strong>Paris</strong> &lt;b&gt;x&lt;/b&gt;</p>\n"
    row.data["content"]["parts"][1]["text"] = "changed later"  # the item uses what was stored
    assert event_item(row)["html"] == row.html


@pytest.mark.slow  # migrates back and forth
@pytest.mark.django_db(transaction=True)
def test_the_migration_renders_the_events_stored_before_it() -> None:
    with migrated_back_to("agent_sessions", "0001_initial") as old:
        Session = old.get_model("agent_sessions", "AgentSession")
        OldEvent = old.get_model("agent_sessions", "SessionEvent")
        Session.objects.create(id="old", app_name="app", user_id="u", last_update_time=0)
        for seq, parts in ((1, [{"text": "<i>hi</i> *there*"}]), (2, [{"function_call": {}}])):
            OldEvent.objects.create(
                session_id="old",
                seq=seq,
                event_id=f"e{seq}",
                author="bot",
                timestamp=0,
                version=seq,
                data={"author": "bot", "content": {"role": "model", "parts": parts}},
            )
    assert list(SessionEvent.objects.order_by("seq").values_list("html", flat=True)) == [
        "<p>&lt;i&gt;hi&lt;/i&gt; <em>there</em></p>\n",
        "",
    ]


def test_many_sessions_are_read_together_each_up_to_the_limit(make_session: MakeSession) -> None:
    from agentdash.changes.items import items_after_many
    from agentdash.spans.services import span_upsert

    for name in ("a", "b", "c"):
        make_session(name)
    texts = {name: [store_event(name, f"{name}{i}").id for i in range(4)] for name in "ab"}
    span_upsert(trace_id="t" * 32, span_id="s" * 16, name="step", start_time=1, session_id="b")
    found = items_after_many({"a": 1, "b": 0, "c": 0}, limit=3)
    assert set(found) == {"a", "b"}  # nothing new for c: no entry
    assert [(i["seq"], i["data"]["id"]) for i in found["a"]] == [
        (2, texts["a"][1]),
        (3, texts["a"][2]),
        (4, texts["a"][3]),
    ]
    assert [i["seq"] for i in found["b"]] == [1, 2, 3]  # the limit holds per session
    rest = items_after_many({"b": 3}, limit=3)["b"]
    assert [(i["kind"], i["data"]["name" if i["kind"] == "span" else "id"]) for i in rest] == [
        ("event", texts["b"][3]),
        ("span", "step"),
    ]
    # The same as one session at a time.
    for name, after in (("a", 1), ("b", 0), ("b", 3)):
        single = items_after(session_id=name, after_seq=after, limit=3)
        assert items_after_many({name: after}, limit=3)[name] == single


def test_spans_just_stored_are_taken_from_the_caller_not_read_back(
    make_session: MakeSession,
) -> None:
    from agentdash.changes.items import items_after_many
    from agentdash.spans.services import span_upsert

    make_session("s1")
    span_upsert(trace_id="t" * 32, span_id="s" * 16, name="stored", start_time=1, session_id="s1")
    fresh = {("s1", 1): {"name": "as the flusher stored it"}}
    (item,) = items_after_many({"s1": 0}, limit=10, fresh=fresh)["s1"]
    assert item["data"] == {"name": "as the flusher stored it"}
    (read,) = items_after_many({"s1": 0}, limit=10)["s1"]
    assert read["data"]["name"] == "stored"
    # A later version written by someone else (the reaper closing it): its change reads the
    # row, whatever the caller holds for the earlier seq.
    span_upsert(
        trace_id="t" * 32, span_id="s" * 16, name="closed", start_time=1, end_time=2,
        session_id="s1",
    )  # fmt: skip
    first, later = items_after_many({"s1": 0}, limit=10, fresh=fresh)["s1"]
    assert first["data"] == {"name": "as the flusher stored it"}
    assert (later["seq"], later["data"]["name"], later["data"]["end_time"]) == (2, "closed", 2)


def test_many_sessions_are_read_in_chunks(
    make_session: MakeSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentdash.changes import items as items_module

    monkeypatch.setattr(items_module, "SESSIONS_PER_QUERY", 2)
    for i in range(5):
        make_session(f"s{i}")
        store_event(f"s{i}", f"hello {i}")
    found = items_module.items_after_many({f"s{i}": 0 for i in range(5)}, limit=10)
    assert {name: [i["data"]["html"] for i in items] for name, items in found.items()} == {
        f"s{i}": [f"<p>hello {i}</p>\n"] for i in range(5)
    }


def test_a_change_too_large_to_send_is_trimmed_to_what_identifies_it() -> None:
    from agentdash.changes.items import TOO_LARGE, item_trimmed

    span = {
        "seq": 3,
        "kind": "span",
        "data": {"span_id": "s", "name": "call_llm", "end_time": 5, "attributes": {"x": "y" * 9}},
    }
    trimmed = item_trimmed(span)
    assert trimmed["data"] == {
        "span_id": "s",
        "name": "call_llm",
        "end_time": 5,
        "attributes": {"agentdash.truncated": True},
        "events": [],
    }
    assert span["data"]["attributes"] == {"x": "y" * 9}  # the original is left alone
    event = {
        "seq": 4,
        "kind": "event",
        "data": {
            "id": "e",
            "author": "bot",
            "html": "<p>long</p>",
            "function_calls": [{"id": "c", "name": "f", "args": {"big": 1}}],
            "function_responses": [],
            "state_delta": {"k": 1},
        },
    }
    data = item_trimmed(event)["data"]
    assert data["function_calls"] == [{"id": "c", "name": "f", "args": TOO_LARGE}]
    assert data["state_delta"] == TOO_LARGE and data["author"] == "bot"
    assert item_trimmed({"seq": 5, "kind": "run", "data": None})["data"] is None
