"""The golden websocket messages (``golden/``): one file per message shape, each checked
against the implementation. Client files must be accepted by the consumer's parser; server
files must equal what the real serializers produce for fixture data, where a golden value
``"<int>"``, ``"<str>"`` or ``"<float>"`` stands for any value of that type (database ids,
times). Every message type of the protocol has at least one file."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import User
from google.genai import types

from agentdash.agent_sessions._state_store import event_append
from agentdash.agent_sessions.event_data import event_serialize
from agentdash.agent_sessions.models import AgentSession
from agentdash.agent_sessions.services import session_state_update
from agentdash.changes.items import items_after
from agentdash.changes.services import session_change_next
from agentdash.controls.announce import switch_current
from agentdash.controls.services import callback_setting_set
from agentdash.live import access, actions, protocol
from agentdash.live.previews import spans_pages
from agentdash.runs.lifecycle import run_change_record
from agentdash.runs.models import Run
from agentdash.spans.prices import model_price_set
from agentdash.spans.services import span_upsert
from agentdash.spans.span_version import SpanVersion
from agentdash.spans.totals import price_book
from runtime.events.event import Event
from runtime.events.event_actions import EventActions
from tests.agentdash.recording_executor import RecordingExecutor

GOLDEN = Path(__file__).parent / "golden"
FILES = sorted(GOLDEN.glob("*.json"))
SERVER: dict[str, Callable[[User], dict[str, Any]]] = {}


def server(name: str) -> Callable[[Callable[[User], dict[str, Any]]], Any]:
    def register(build: Callable[[User], dict[str, Any]]) -> Any:
        SERVER[name] = build
        return build

    return register


def load(path: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(path.read_text())
    return found


def matches(golden: Any, actual: Any, where: str = "$") -> None:
    placeholders = {"<int>": int, "<str>": str, "<float>": float}
    if isinstance(golden, str) and golden in placeholders:
        expected = placeholders[golden]
        assert isinstance(actual, expected) and not isinstance(actual, bool), (where, actual)
    elif isinstance(golden, dict):
        assert isinstance(actual, dict) and set(golden) == set(actual), (where, golden, actual)
        for key, value in golden.items():
            matches(value, actual[key], f"{where}.{key}")
    elif isinstance(golden, list):
        assert isinstance(actual, list) and len(golden) == len(actual), (where, golden, actual)
        for i, (g, a) in enumerate(zip(golden, actual, strict=True)):
            matches(g, a, f"{where}[{i}]")
    else:
        assert golden == actual and type(golden) is type(actual), (where, golden, actual)


# ── Fixture data and the real serializers ───────────────────────────────────────────────────
def session(owner: User) -> AgentSession:
    return AgentSession.objects.create(
        id="s-golden", app_name="capital_agent", user_id="u", owner=owner, last_update_time=1.0
    )


def operator_access(user: User, found: AgentSession) -> access.Access:
    return access.Access(user=user, session=found, permissions=frozenset(access.ACTION_PERMISSIONS))


@server("server.changes.event")
def _event(user: User) -> dict[str, Any]:
    session(user)
    text = "Paris is the **capital**. <img src=x onerror=alert(1)> [more](javascript:alert(1))"
    event = Event(
        id="e-golden-1",
        invocation_id="e-inv-1",
        author="capital_agent",
        timestamp=1_700_000_000.5,
        content=types.Content(role="model", parts=[types.Part(text=text)]),
        actions=EventActions(state_delta={"last_city": "Paris"}),
    )
    event_append(session_id="s-golden", event_data=event_serialize(event))
    call = Event(
        id="e-golden-2",
        invocation_id="e-inv-1",
        author="capital_agent",
        timestamp=1_700_000_001.0,
        content=types.Content(
            role="model",
            parts=[
                types.Part(
                    function_call=types.FunctionCall(
                        id="call-1", name="get_capital", args={"country": "France"}
                    )
                )
            ],
        ),
    )
    event_append(session_id="s-golden", event_data=event_serialize(call))
    return protocol.changes_message(
        items_after(session_id="s-golden", after_seq=0, limit=10), replay=True
    )


@server("server.changes.span")
def _span(user: User) -> dict[str, Any]:
    session(user)
    run = Run.objects.create(
        session_id="s-golden", agent_name="capital_agent", invocation_id="e-inv-1", message={}
    )
    identity = {"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736", "span_id": "00f067aa0ba902b7"}
    started = {
        **identity,
        "name": "execute_tool get_capital",
        "parent_span_id": "53995c3f42cd8ad8",
        "start_time": 1_700_000_000_000_000_000,
        "attributes": {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_capital"},
        "session_id": "s-golden",
        "run_id": run.pk,
    }
    span_upsert(**started)
    start_item = items_after(session_id="s-golden", after_seq=0, limit=10)
    span_upsert(
        **{**started, "attributes": {**started["attributes"], "gen_ai.tool.call.result": "{}"}},
        end_time=1_700_000_000_250_000_000,
        status="ok",
        events=[{"name": "retry", "time": 1_700_000_000_100_000_000, "attributes": {}}],
    )
    # What a live client gets, over two flushes: the span as it started, then as it ended.
    return protocol.changes_message(
        start_item + items_after(session_id="s-golden", after_seq=1, limit=10), replay=False
    )


@server("server.spans")
def _spans(user: User) -> dict[str, Any]:
    # A tool call as it started, not stored yet: what a flush under way keeps waiting.
    version = SpanVersion(
        trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
        span_id="00f067aa0ba902b7",
        name="execute_tool get_capital",
        parent_span_id="53995c3f42cd8ad8",
        start_time=1_700_000_000_000_000_000,
        attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_capital"},
        session_id="s-golden",
        run_id=7,
    )
    (page,) = spans_pages([version], price_book())
    message: dict[str, Any] = json.loads(page)
    return message


@server("server.changes.run")
def _run(user: User) -> dict[str, Any]:
    session(user)
    run = Run.objects.create(
        session_id="s-golden",
        agent_name="capital_agent",
        invocation_id="e-inv-1",
        message={},
        status=Run.Status.FAILED,
        attempt=1,
        error="ModelCallError: 503 after 5 attempts",
        trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
    )
    # Its one model call (seq 1): the run's usage sums its model calls, at this price.
    model_price_set(
        model="gemini-2.5-flash",
        input_per_mtok=Decimal("0.30"),
        output_per_mtok=Decimal("2.50"),
        cached_input_per_mtok=Decimal("0.03"),
        as_of=date(2026, 11, 24),
        source="https://ai.google.dev/gemini-api/docs/pricing",
        actor=None,
    )
    span_upsert(
        trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
        span_id="53995c3f42cd8ad8",
        name="generate_content gemini-2.5-flash",
        start_time=1_700_000_000_000_000_000,
        end_time=1_700_000_000_250_000_000,
        attributes={
            "gen_ai.request.model": "gemini-2.5-flash",
            "gen_ai.usage.input_tokens": 1200,
            "gen_ai.usage.output_tokens": 40,
            "gen_ai.usage.reasoning.output_tokens": 32,
        },
        session_id="s-golden",
        run_id=run.pk,
    )
    run_change_record(run=run)  # seq 2: superseded by the run's next change
    run_change_record(run=run)  # seq 3: its latest, which tells its data
    session_change_next(session_id="s-golden", kind="run", ref="999999")  # a run since deleted
    return protocol.changes_message(
        items_after(session_id="s-golden", after_seq=1, limit=10), replay=False
    )


@server("server.replay.done")
def _replay_done(user: User) -> dict[str, Any]:
    return protocol.replay_done_message(42)


@server("server.partial")
def _partial(user: User) -> dict[str, Any]:
    return protocol.partial_message(
        run_id=12, invocation_id="e-inv-1", author="capital_agent", text="Paris is"
    )


@server("server.chat.accepted")
def _chat_accepted(user: User) -> dict[str, Any]:
    return protocol.chat_accepted_message(run_id=12, invocation_id="e-inv-1", client_id="c-17")


@server("server.ack.run.cancel")
def _ack_run_cancel(user: User) -> dict[str, Any]:
    found = session(user)
    run = Run.objects.create(
        session=found,
        agent_name="capital_agent",
        invocation_id="e-inv-1",
        message={},
        status=Run.Status.RUNNING,
    )
    request = protocol.RunCancel(run_id=run.pk, reason="taking too long")
    return actions._run_cancel(request, operator_access(user, found))


@server("server.ack.callback.toggle")
def _ack_callback_toggle(user: User) -> dict[str, Any]:
    found = session(user)
    request = protocol.CallbackToggle(
        agent="capital_agent", callback="StepLogger", enabled=False, scope="session", reason="r"
    )
    return async_to_sync(actions._callback_toggle)(request, operator_access(user, found))


@server("server.ack.state.edit")
def _ack_state_edit(user: User) -> dict[str, Any]:
    found = session(user)
    request = protocol.StateEdit(delta={"tone": "formal"}, expected_version=0, reason="asked")
    return actions._state_edit(request, operator_access(user, found))


def confirmation_requested(found: AgentSession) -> None:
    """A stored request of the runtime's (the agent asks before it sends money), and its run,
    waiting."""
    asked = types.FunctionCall(
        id="adk-golden-1",
        name="adk_request_confirmation",
        args={
            "originalFunctionCall": {"id": "call-7", "name": "transfer", "args": {"amount": 500}},
            "toolConfirmation": {"hint": "Send 500 EUR?", "confirmed": False, "payload": None},
        },
    )
    event = Event(
        invocation_id="e-inv-1",
        author="capital_agent",
        content=types.Content(role="model", parts=[types.Part(function_call=asked)]),
    )
    event_append(session_id=found.pk, event_data=event_serialize(event))
    Run.objects.create(
        session=found,
        agent_name="capital_agent",
        invocation_id="e-inv-1",
        message={},
        status=Run.Status.WAITING,
    )


@server("server.ack.confirmation.answer")
def _ack_confirmation_answer(user: User) -> dict[str, Any]:
    found = session(user)
    confirmation_requested(found)
    request = protocol.ConfirmationAnswer(
        request_id="adk-golden-1", decision="approve", payload={"amount": 450}, has_payload=True
    )
    return actions._confirmation_answer(request, operator_access(user, found))


@server("server.error.forbidden")
def _error_forbidden(user: User) -> dict[str, Any]:
    found = session(user)
    confirmation_requested(found)
    stranger = User.objects.create_user("stranger")
    request = protocol.ConfirmationAnswer(request_id="adk-golden-1", decision="approve")
    seen = access.Access(user=stranger, session=found, permissions=frozenset())
    with pytest.raises(protocol.ProtocolError) as refused:
        actions._confirmation_answer(request, seen)
    return refused.value.as_message()


@server("server.error.conflict")
def _error_conflict(user: User) -> dict[str, Any]:
    found = session(user)
    session_state_update(
        session_id=found.id, delta={"tone": "casual"}, expected_version=0, actor=None, reason="x"
    )
    request = protocol.StateEdit(delta={"tone": "formal"}, expected_version=0, reason="asked")
    with pytest.raises(protocol.ProtocolError) as refused:
        actions._state_edit(request, operator_access(user, found))
    return refused.value.as_message()


@server("server.error.bad_json")
def _error_bad_json(user: User) -> dict[str, Any]:
    with pytest.raises(protocol.ProtocolError) as refused:
        actions.parse_client_message('{"type": "ping",')
    return refused.value.as_message()


@server("server.error.bad_request")
def _error_bad_request(user: User) -> dict[str, Any]:
    with pytest.raises(protocol.ProtocolError) as refused:
        actions.parse_client_message('{"type": "chat.send", "text": "hi\\u0000"}')
    return refused.value.as_message()


@server("server.error.unavailable")
def _error_unavailable(user: User) -> dict[str, Any]:
    return protocol.unavailable_error()


@server("server.callback.changed")
def _callback_changed(user: User) -> dict[str, Any]:
    callback_setting_set(
        agent_name="capital_agent", callback_name="StepLogger", enabled=False, actor=user
    )
    change = switch_current(("StepLogger", "capital_agent", None))
    return protocol.callback_changed_message(**dataclasses.asdict(change))


@server("server.pong")
def _pong(user: User) -> dict[str, Any]:
    return protocol.pong_message()


# ── The tests ───────────────────────────────────────────────────────────────────────────────
def test_every_message_type_has_a_golden_file() -> None:
    client = {load(p)["type"] for p in FILES if p.name.startswith("client.")}
    assert client == actions.CLIENT_MESSAGE_TYPES
    server_types = {load(p)["type"] for p in FILES if p.name.startswith("server.")}
    assert server_types == protocol.SERVER_MESSAGE_TYPES
    assert {p.stem for p in FILES if p.name.startswith("server.")} == set(SERVER)
    assert all(p.name.startswith(("client.", "server.")) for p in FILES)


@pytest.mark.parametrize("path", [p for p in FILES if p.name.startswith("client.")], ids=str)
def test_client_golden_messages_are_accepted(path: Path) -> None:
    golden = load(path)
    parsed = actions.parse_client_message(path.read_text())
    known = {f.name for f in dataclasses.fields(parsed)}
    assert set(golden) - {"type"} <= known, "the golden file has fields the parser ignores"
    for name in set(golden) - {"type"}:
        assert getattr(parsed, name) == golden[name]


@pytest.mark.django_db(transaction=True)  # the callback switch's ack goes through a thread
@pytest.mark.parametrize("path", [p for p in FILES if p.name.startswith("server.")], ids=str)
def test_server_golden_messages_match_the_serializers(
    path: Path, operator_user: User, recorder: RecordingExecutor
) -> None:
    # (recorder: a confirmation's answer queues a run, which must not run here)
    actual = json.loads(json.dumps(SERVER[path.stem](operator_user)))
    matches(load(path), actual)


def test_the_protocol_page_lists_every_socket_action_and_error_code() -> None:
    """docs/PROTOCOL.md's client table is the registry's (no more, no fewer types), and its
    error table names every code with the HTTP status the shared mapping gives."""
    import re

    from agentdash.core.problems import HTTP_STATUS

    text = (Path(__file__).parents[3] / "docs" / "PROTOCOL.md").read_text()
    section = text.split("## Client → server", 1)[1].split("Unknown fields are ignored", 1)[0]
    listed = set(re.findall(r"^\| `([a-z.]+)` \|", section, flags=re.M))
    assert listed == set(actions.SOCKET_ACTIONS)
    for code, status in HTTP_STATUS.items():
        assert f"`{code}`" in text, code
        if code not in ("bad_json", "unknown_type", "too_large"):
            assert f"| `{code}` | {status} |" in text, code
