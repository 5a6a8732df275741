"""Requests over the session websocket: each checked against fresh permissions, each one
service call; operator actions refused to users, also when the role is revoked mid-socket."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import Group, User

from agentdash.agent_sessions.models import SessionEvent
from agentdash.agent_sessions.selectors import session_state_view
from agentdash.agent_sessions.services import session_state_update
from agentdash.controls.models import CallbackSetting
from agentdash.controls.switch_broadcast import run_control_listener
from agentdash.controls.switchboard import DatabaseSwitchboard
from agentdash.core.models import AuditEntry
from agentdash.runs.models import Run
from tests.agentdash.live.conftest import (
    Connect,
    changes_until,
    closed_with,
    eventually,
    hello,
    nothing_more,
    receive,
)
from tests.agentdash.recording_executor import RecordingExecutor
from tests.agentdash.stored import session_of

pytestmark = pytest.mark.django_db(transaction=True)

TOGGLE = {
    "type": "callback.toggle",
    "agent": "capital_agent",
    "callback": "StepLogger",
    "enabled": False,
    "scope": "session",
    "reason": "too chatty",
}


@pytest.fixture
def owned(alice: User) -> str:
    return session_of(alice, "s-alice", app_name="capital_agent").id


def make_run(session_id: str, status: str = Run.Status.RUNNING) -> Run:
    return Run.objects.create(
        session_id=session_id,
        agent_name="capital_agent",
        invocation_id=f"e-{uuid.uuid4().hex[:12]}",
        status=status,
        message={"role": "user", "parts": [{"text": "hi"}]},
    )


async def request(socket: Any, message: dict[str, Any]) -> dict[str, Any]:
    await socket.send_json_to(message)
    return await receive(socket)


# ── chat.send ───────────────────────────────────────────────────────────────────────────────
async def test_chat_send_queues_a_run_and_answers_with_it(
    connect: Connect, owned: str, alice: User, recorder: RecordingExecutor
) -> None:
    socket = await connect(alice, owned)
    await hello(socket)
    answer = await request(
        socket, {"type": "chat.send", "text": "Capital of France?", "client_id": "c1"}
    )
    assert answer["type"] == "chat.accepted", answer
    run = await Run.objects.aget(pk=answer["run_id"])
    assert answer == {
        "type": "chat.accepted",
        "run_id": run.pk,
        "invocation_id": run.invocation_id,
        "client_id": "c1",
    }
    assert (run.agent_name, run.session_id, run.requested_by_id) == (
        "capital_agent",
        owned,
        alice.pk,
    )
    assert run.message["parts"][0]["text"] == "Capital of France?"
    assert await eventually(lambda: recorder.submitted == [run.pk], "the run to be submitted")
    # The run's change reaches the client live.
    items, _ = await changes_until(socket, lambda items: any(i["kind"] == "run" for i in items))
    assert [i["data"]["id"] for i in items if i["kind"] == "run"] == [run.pk]


async def test_a_message_sent_again_on_a_new_socket_is_answered_with_its_first_run(
    connect: Connect, owned: str, alice: User, recorder: RecordingExecutor
) -> None:
    """A page whose socket closed before the answer came sends the message again, with its
    client_id, once it is back: it is the same run, queued once."""
    message = {"type": "chat.send", "text": "Capital of France?", "client_id": "c-lost"}
    first = await request(await connect(alice, owned), message)
    socket = await connect(alice, owned)  # the page, back on a new socket
    await hello(socket)
    again = await request(socket, {**message, "req": "r-2"})
    assert again == {**first, "req": "r-2"} and first["type"] == "chat.accepted"
    assert await Run.objects.filter(session_id=owned).acount() == 1
    assert await eventually(lambda: recorder.submitted == [first["run_id"]], "one submission")
    other = await request(socket, {**message, "text": "Capital of Spain?"})
    assert (other["code"], other["ref"]) == ("bad_request", "chat.send")
    assert "client_id" in other["message"]
    assert await Run.objects.filter(session_id=owned).acount() == 1


async def test_chat_send_for_an_agent_that_is_not_configured_is_a_bad_request(
    connect: Connect, alice: User, recorder: RecordingExecutor
) -> None:
    session = await sync_to_async(session_of)(alice, "s-unknown-app", app_name="nobody")
    socket = await connect(alice, session.id)
    answer = await request(socket, {"type": "chat.send", "text": "hello"})
    assert (answer["code"], answer["ref"]) == ("bad_request", "chat.send")
    assert not await Run.objects.acount()


# ── run.cancel ──────────────────────────────────────────────────────────────────────────────
async def test_the_owner_cancels_a_run_of_the_session(
    connect: Connect, owned: str, alice: User, bob: User
) -> None:
    run = await sync_to_async(make_run)(owned)
    other = await sync_to_async(session_of)(bob, "s-bob")
    foreign = await sync_to_async(make_run)(other.id)
    socket = await connect(alice, owned)
    answer = await request(socket, {"type": "run.cancel", "run_id": foreign.pk, "reason": "x"})
    assert answer["code"] == "not_found"  # another session's run is not found here
    answer = await request(socket, {"type": "run.cancel", "run_id": run.pk, "reason": "stop"})
    assert answer == {
        "type": "ack",
        "ref": "run.cancel",
        "run_id": run.pk,
        "status": "running",
        "cancel_requested": True,
    }
    await run.arefresh_from_db()
    assert (run.cancel_requested, run.cancel_reason) == (True, "stop")
    finished = await sync_to_async(make_run)(owned, status=Run.Status.SUCCEEDED)
    answer = await request(socket, {"type": "run.cancel", "run_id": finished.pk})
    assert (answer["code"], answer["status"]) == ("conflict", "succeeded")


# ── callback.toggle ─────────────────────────────────────────────────────────────────────────
async def test_a_toggle_reaches_every_switchboard_listening(
    connect: Connect, owned: str, operator_user: User
) -> None:
    switchboard = DatabaseSwitchboard()
    ready = asyncio.Event()
    listener = asyncio.create_task(run_control_listener(switchboard, ready=ready))
    try:
        await asyncio.wait_for(ready.wait(), 10)
        socket = await connect(operator_user, owned)
        answer = await request(socket, TOGGLE)
        assert answer == {
            "type": "ack",
            "ref": "callback.toggle",
            "setting": {
                "agent_name": "capital_agent",
                "callback_name": "StepLogger",
                "session_id": owned,
                "enabled": False,
            },
        }

        def switched_off() -> bool:
            return not switchboard.is_enabled(
                agent_name="capital_agent", callback_name="StepLogger", session_id=owned
            )

        await eventually(switched_off, "the listener to apply the change")
        assert switchboard.is_enabled(
            agent_name="capital_agent", callback_name="StepLogger", session_id="another"
        )
        entry = await AuditEntry.objects.aget(action="callback_setting.set")
        assert (entry.actor_id, entry.reason) == (operator_user.pk, "too chatty")
    finally:
        listener.cancel()
        await asyncio.gather(listener, return_exceptions=True)


async def test_the_listener_starts_from_the_database(operator_user: User, owned: str) -> None:
    await CallbackSetting.objects.acreate(
        agent_name="capital_agent", callback_name="guard", session_id=None, enabled=False
    )
    switchboard = DatabaseSwitchboard()
    ready = asyncio.Event()
    listener = asyncio.create_task(run_control_listener(switchboard, ready=ready))
    try:
        await asyncio.wait_for(ready.wait(), 10)
        assert not switchboard.is_enabled(
            agent_name="capital_agent", callback_name="guard", session_id=owned
        )
    finally:
        listener.cancel()
        await asyncio.gather(listener, return_exceptions=True)


# ── state.edit ──────────────────────────────────────────────────────────────────────────────
async def test_a_state_edit_is_acknowledged_and_streamed_as_an_operator_event(
    connect: Connect, owned: str, operator_user: User
) -> None:
    socket = await connect(operator_user, owned)
    await hello(socket)
    edit = {"type": "state.edit", "delta": {"mood": "calm"}, "expected_version": 0, "reason": "r"}
    answer = await request(socket, edit)
    assert (answer["type"], answer["ref"], answer["version"]) == ("ack", "state.edit", 1)
    assert answer["state"] == {"mood": "calm"}
    items, _ = await changes_until(socket, lambda items: len(items) >= 1)
    event = items[0]["data"]
    assert (items[0]["kind"], event["id"]) == ("event", answer["event_id"])
    assert (event["author"], event["state_delta"], event["version"]) == (
        "operator",
        {"mood": "calm"},
        1,
    )
    assert event["reason"] == "r"


async def test_a_conflicting_state_edit_gets_the_current_values(
    connect: Connect, owned: str, operator_user: User
) -> None:
    await sync_to_async(session_state_update)(
        session_id=owned, delta={"mood": "tense"}, expected_version=0, actor=None, reason="x"
    )
    socket = await connect(operator_user, owned)
    edit = {"type": "state.edit", "delta": {"mood": "calm"}, "expected_version": 0, "reason": "r"}
    answer = await request(socket, edit)
    assert (answer["type"], answer["code"], answer["ref"]) == ("error", "conflict", "state.edit")
    assert answer["current"] == {"mood": "tense"}
    assert answer["version"] == 1
    assert answer["conflicts"]["mood"]["changed_at_version"] == 1
    view = await sync_to_async(session_state_view)(session_id=owned)
    assert (view.state, view.version) == ({"mood": "tense"}, 1)


# ── Permissions, per message ────────────────────────────────────────────────────────────────
@pytest.mark.parametrize(
    "message",
    [
        TOGGLE,
        {"type": "state.edit", "delta": {"k": 1}, "expected_version": 0, "reason": "r"},
    ],
    ids=["callback.toggle", "state.edit"],
)
async def test_operator_actions_are_refused_to_users(
    connect: Connect, owned: str, alice: User, message: dict[str, Any]
) -> None:
    socket = await connect(alice, owned)
    answer = await request(socket, message)
    assert (answer["type"], answer["code"], answer["ref"]) == (
        "error",
        "forbidden",
        message["type"],
    )
    assert not await CallbackSetting.objects.acount()
    assert not await SessionEvent.objects.acount()


async def test_revoking_the_operator_role_takes_effect_at_the_next_message(
    connect: Connect, operator_user: User, operators_group: Group
) -> None:
    own = await sync_to_async(session_of)(operator_user, "s-operator")  # still theirs after
    socket = await connect(operator_user, own.id)
    edit = {"type": "state.edit", "delta": {"k": 1}, "expected_version": 0, "reason": "r"}
    assert (await request(socket, edit))["type"] == "ack"
    await operator_user.groups.aremove(operators_group)
    answer = await request(socket, {**edit, "expected_version": 1})
    assert (answer["code"], answer["ref"]) == ("forbidden", "state.edit")
    assert (await request(socket, TOGGLE))["code"] == "forbidden"
    assert await request(socket, {"type": "ping"}) == {"type": "pong"}  # still the owner
    assert await SessionEvent.objects.acount() == 1
    assert not await CallbackSetting.objects.acount()


async def test_losing_the_session_closes_the_socket(
    connect: Connect, owned: str, alice: User, bob: User
) -> None:
    socket = await connect(alice, owned)
    await hello(socket)
    await nothing_more(socket)
    from agentdash.agent_sessions.models import AgentSession

    await AgentSession.objects.filter(pk=owned).aupdate(owner=bob)
    assert (await request(socket, {"type": "ping"}))["code"] == "forbidden"
    assert await closed_with(socket) == 4403


async def test_a_switch_change_shows_in_every_operator_page_of_its_sessions(
    connect: Connect, owned: str, alice: User, operator_user: User
) -> None:
    other = (await sync_to_async(session_of)(alice, "s-other", app_name="capital_agent")).id
    acting = await connect(operator_user, owned)
    watching = await connect(operator_user, owned)
    elsewhere = await connect(operator_user, other)
    owner = await connect(alice, owned)
    for socket in (acting, watching, elsewhere, owner):
        await hello(socket)
    answer = await request(acting, TOGGLE)
    assert answer["type"] == "ack", answer
    changed = {
        "type": "callback.changed",
        "setting": {
            "agent_name": "capital_agent",
            "callback_name": "StepLogger",
            "session_id": owned,
            "enabled": False,
        },
    }
    assert await receive(watching) == changed
    assert await receive(acting) == changed  # the acting tab hears it too: one code path
    # A session switch is not news for another session's page, nor for a user (no controls).
    await nothing_more(elsewhere)
    await nothing_more(owner)
    # A global switch reaches every operator page.
    answer = await request(acting, {**TOGGLE, "scope": "global", "enabled": True})
    assert answer["type"] == "ack", answer
    for socket in (watching, elsewhere):
        found = await receive(socket)
        assert found["type"] == "callback.changed"
        assert found["setting"]["session_id"] is None and found["setting"]["enabled"] is True
    await nothing_more(owner)
