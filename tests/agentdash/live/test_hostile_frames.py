"""Hostile frames over the session websocket: every string field of every client message with
a NUL, a lone surrogate or one character too many, and JSON nested 1,000 deep — each answered
with an ``error`` naming the problem (never ``internal``), nothing changed, the socket open.
On PostgreSQL (``make test``'s second pass) these reached the database and failed before.

Also: ids that cannot be ids, and a switch whose broadcast fails after it was stored."""

from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth.models import User

from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.asgi import application
from agentdash.controls import announce
from agentdash.controls.models import CallbackSetting
from agentdash.core.models import AuditEntry
from agentdash.live.protocol import (
    MAX_AGENT_CHARS,
    MAX_CALLBACK_CHARS,
    MAX_ID_CHARS,
    MAX_REASON_CHARS,
    MAX_TEXT_CHARS,
)
from agentdash.runs.models import Run
from tests.agentdash.live.conftest import (
    ORIGIN,
    WAIT,
    Connect,
    closed_with,
    eventually,
    hello,
    login_cookie,
    receive,
)
from tests.agentdash.live_harness import free_port
from tests.agentdash.recording_executor import RecordingExecutor
from tests.agentdash.stored import session_of

pytestmark = pytest.mark.django_db(transaction=True)

NUL, SURROGATE = "a\x00b", "a\ud800b"

# Each client message, valid, and the limit of each of its string fields.
MESSAGES: dict[str, tuple[dict[str, Any], dict[str, int]]] = {
    "chat.send": (
        {"type": "chat.send", "text": "hello", "client_id": "c1"},
        {"text": MAX_TEXT_CHARS, "client_id": MAX_ID_CHARS},
    ),
    "run.cancel": (
        {"type": "run.cancel", "run_id": 1, "reason": "stop"},
        {"reason": MAX_REASON_CHARS},
    ),
    "callback.toggle": (
        {
            "type": "callback.toggle",
            "agent": "capital_agent",
            "callback": "StepLogger",
            "enabled": False,
            "scope": "session",
            "reason": "why",
        },
        {"agent": MAX_AGENT_CHARS, "callback": MAX_CALLBACK_CHARS, "reason": MAX_REASON_CHARS},
    ),
    "state.edit": (
        {"type": "state.edit", "delta": {"k": "v"}, "expected_version": 0, "reason": "why"},
        {"reason": MAX_REASON_CHARS},
    ),
}

CASES = [
    pytest.param(kind, field, bad, id=f"{kind}-{field}-{label}")
    for kind, (_, limits) in MESSAGES.items()
    for field, limit in limits.items()
    for label, bad in (("nul", NUL), ("surrogate", SURROGATE), ("too-long", "x" * (limit + 1)))
]


def frame(message: dict[str, Any]) -> str:
    # ensure_ascii: a lone surrogate travels as the JSON escape \ud800, as a client sends it
    return json.dumps(message, ensure_ascii=True)


@pytest.fixture
async def operator_socket(connect: Connect, operator_user: User) -> Any:
    session = await sync_to_async(session_of)(None, "s-hostile", "capital_agent")
    socket = await connect(operator_user, session.id)
    await hello(socket)
    return socket


async def nothing_changed() -> None:
    assert not await Run.objects.aexists()
    assert not await SessionEvent.objects.aexists()
    assert not await CallbackSetting.objects.aexists()
    assert not await AuditEntry.objects.aexists()
    session = await AgentSession.objects.aget(pk="s-hostile")
    assert (session.version, session.state) == (0, {})


async def still_open(socket: Any) -> None:
    await socket.send_json_to({"type": "ping"})
    assert await receive(socket) == {"type": "pong"}


@pytest.mark.parametrize(("kind", "field", "bad"), CASES)
async def test_a_bad_string_in_any_field_is_a_bad_request_naming_it(
    operator_socket: Any, recorder: RecordingExecutor, kind: str, field: str, bad: str
) -> None:
    message = {**MESSAGES[kind][0], field: bad}
    await operator_socket.send_to(text_data=frame(message))
    answer = await receive(operator_socket)
    assert (answer["type"], answer["code"], answer["ref"]) == ("error", "bad_request", kind)
    assert f"'{field}'" in answer["message"]
    await nothing_changed()
    await still_open(operator_socket)


@pytest.mark.parametrize(
    ("delta", "problem"),
    [
        ({"k": NUL}, "NUL character"),
        ({"k": [SURROGATE]}, "unpaired surrogate"),
        ({NUL: 1}, "NUL character"),
        ({SURROGATE: 1}, "unpaired surrogate"),
    ],
)
async def test_a_bad_state_delta_is_a_bad_request(
    operator_socket: Any, delta: dict[str, Any], problem: str
) -> None:
    message = {**MESSAGES["state.edit"][0], "delta": delta}
    await operator_socket.send_to(text_data=frame(message))
    answer = await receive(operator_socket)
    assert (answer["code"], answer["ref"]) == ("bad_request", "state.edit")
    assert problem in answer["message"] and "'delta'" in answer["message"]
    await nothing_changed()
    await still_open(operator_socket)


@pytest.mark.parametrize(
    ("field", "bad", "said"),
    [
        ("payload", 1e400, "not finite"),
        ("payload", {"a": [1e400]}, "not finite"),
        ("decision", ["approve"], "'decision'"),
        ("decision", {"approve": True}, "'decision'"),
    ],
)
async def test_a_confirmation_answer_json_cannot_carry_is_a_bad_request(
    operator_socket: Any, field: str, bad: Any, said: str
) -> None:
    valid = {"type": "confirmation.answer", "request_id": "r-1", "decision": "approve"}
    message = {**valid, field: bad}
    # json.dumps writes 1e400 as Infinity, which the protocol refuses as no JSON: send the
    # overflowing number as the sender would, a literal that parses to infinity.
    text = frame(message).replace("Infinity", "1e400")
    await operator_socket.send_to(text_data=text)
    answer = await receive(operator_socket)
    assert (answer["type"], answer["code"], answer["ref"]) == (
        "error",
        "bad_request",
        "confirmation.answer",
    )
    assert said in answer["message"]
    await nothing_changed()
    await still_open(operator_socket)


@pytest.mark.parametrize("kind", [*MESSAGES, "hello", "ping", "no.such.type"])
async def test_json_nested_a_thousand_deep_is_refused_before_it_is_parsed(
    operator_socket: Any, kind: str
) -> None:
    deep = "[" * 1_000 + "]" * 1_000
    await operator_socket.send_to(text_data=f'{{"type": "{kind}", "x": {deep}}}')
    answer = await receive(operator_socket)
    assert (answer["type"], answer["code"]) == ("error", "bad_json")
    assert "nested deeper than 64" in answer["message"]
    await nothing_changed()
    await still_open(operator_socket)


async def test_a_bad_type_is_echoed_storable(operator_socket: Any) -> None:
    await operator_socket.send_to(text_data=frame({"type": SURROGATE}))
    answer = await receive(operator_socket)
    assert answer["code"] == "unknown_type" and "\ud800" not in answer["ref"]
    await still_open(operator_socket)


@pytest.mark.parametrize("session_id", ["%00", "a%00b", "x" * 129, "a/b"])
async def test_an_id_that_cannot_be_a_sessions_is_no_socket(
    connect: Connect, operator_user: User, session_id: str
) -> None:
    socket = await connect(operator_user, session_id)
    assert socket.accepted
    assert await closed_with(socket) == 4404


@pytest.mark.parametrize("key", ["\x00" * 8 + "x", "abcdefgh\udfff", "a" * 500])
async def test_a_forged_session_cookie_is_no_session(key: str, alice: User, live: Any) -> None:
    session = await sync_to_async(session_of)(alice, "s-cookie")
    cookie = f'{settings.SESSION_COOKIE_NAME}="{key}"'.encode("utf-8", "surrogatepass")
    socket = WebsocketCommunicator(
        application,
        f"/ws/sessions/{session.id}/",
        [(b"origin", ORIGIN.encode()), (b"cookie", cookie)],
    )
    accepted, _ = await socket.connect(timeout=WAIT)
    assert accepted and await closed_with(socket) == 4403  # signed out, not a server error


async def test_an_address_that_is_no_socket_is_closed_as_not_found(
    operator_user: User, live: Any
) -> None:
    for path in ("/ws/", "/ws/nothing/here/", "/elsewhere"):
        socket = WebsocketCommunicator(application, path, [(b"origin", ORIGIN.encode())])
        accepted, _ = await socket.connect(timeout=WAIT)
        assert accepted and await closed_with(socket) == 4404, path


async def test_a_switch_stored_while_the_broadcast_fails_is_acknowledged_and_sent_later(
    operator_socket: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    layer = channel_layers["default"]
    real_send = layer.group_send
    outage = [1]  # the first send fails; its retry comes 0.5 s later

    async def flaky_send(group: str, message: dict[str, Any]) -> None:
        if group == "controls" and message.get("type") == "callback.changed" and outage:
            outage.pop()
            raise ConnectionError("the channel layer is down")
        await real_send(group, message)

    monkeypatch.setattr(layer, "group_send", flaky_send)
    listener = await layer.new_channel("controls.")
    await layer.group_add("controls", listener)
    off = MESSAGES["callback.toggle"][0]
    await operator_socket.send_json_to(off)
    answer = await receive(operator_socket)
    assert answer["type"] == "ack", answer  # stored: an error would say nothing changed
    assert await CallbackSetting.objects.filter(enabled=False).aexists()
    assert await AuditEntry.objects.filter(action="callback_setting.set").aexists()
    # Switched on again while the "off" is still being retried: that send works at once.
    await operator_socket.send_json_to({**off, "enabled": True, "reason": "back on"})
    assert (await receive(operator_socket))["type"] == "ack"
    heard = [(await eventually(lambda: layer.receive(listener), "the 'on' broadcast"))]
    # The retry sends the switch as stored now — on — never the "off" it failed to send.
    await eventually(lambda: not announce.announcing(), "the retry to end")
    heard.append(await eventually(lambda: layer.receive(listener), "the retried broadcast"))
    assert [h["change"]["enabled"] for h in heard] == [True, True] and not outage


async def test_names_as_long_as_the_protocol_allows_are_stored_and_audited(
    operator_socket: Any,
) -> None:
    toggle = {
        **MESSAGES["callback.toggle"][0],
        "agent": "a" * MAX_AGENT_CHARS,
        "callback": "c" * MAX_CALLBACK_CHARS,
    }
    await operator_socket.send_json_to(toggle)
    answer = await receive(operator_socket)
    assert answer["type"] == "ack", answer
    entry = await AuditEntry.objects.aget(action="callback_setting.set")
    assert entry.target_id.startswith("a" * MAX_AGENT_CHARS + ":" + "c" * MAX_CALLBACK_CHARS)


async def test_a_new_socket_while_the_channel_layer_is_away_is_told_so(
    settings: Any, alice: User, live: Any
) -> None:
    session = await sync_to_async(session_of)(alice, "s-no-layer")
    settings.CHANNEL_LAYERS = {  # a Redis nobody listens on: a real refused connection
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [{"address": f"redis://127.0.0.1:{free_port()}/0"}]},
        }
    }
    cookie = await sync_to_async(login_cookie)(alice)
    socket = WebsocketCommunicator(
        application,
        f"/ws/sessions/{session.id}/",
        [
            (b"origin", ORIGIN.encode()),
            (b"cookie", f"{settings.SESSION_COOKIE_NAME}={cookie}".encode()),
        ],
    )
    accepted, _ = await socket.connect(timeout=WAIT)
    assert accepted
    said = await receive(socket)
    assert (said["type"], said["code"]) == ("error", "unavailable")
    assert said["message"].startswith("the live channel is unavailable")
    assert await closed_with(socket) == 4503  # unavailable: try again later
