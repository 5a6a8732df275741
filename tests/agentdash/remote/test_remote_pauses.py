"""Pauses of agents that run elsewhere (``agentdash.remote.pauses``, ``agentdash.client.pauses``):
a process says a step waits — at a breakpoint set in the dashboard or at a tool confirmation
— the session's page lists it as it lists a local run's request, its owner or an operator
answers once (audited), the process takes the answer with its next poll, and a process that
names the same pause again (AgentDash or the app restarted) finds it, answer included. The
app's own rule ends a pause nobody answers. Bad input gets a clear error; nothing here
trusts the sender."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agentdash.changes.models import SessionChange
from agentdash.client.pauses import Pause, Pauses
from agentdash.controls.breakpoints import breakpoint_add
from agentdash.core.models import AuditEntry
from agentdash.ingest.models import IngestKey
from agentdash.ingest.services import session_id_for
from agentdash.remote.models import RemotePause
from tests.agentdash.ingest.otlp_bodies import request_of, span
from tests.agentdash.ingest.test_otlp_ingest import post
from tests.agentdash.remote.test_remote_api import AGENTS, controls, new_key, register

PAUSE = {"id": "breakpoint:call-1", "session": "s1", "kind": "breakpoint", "agent": "capitals",
         "tool": "get_capital_city", "call_id": "call-1", "args": {"country": "France"},
         "hint": "Breakpoint: before tool get_capital_city",
         "payload": {"breakpoint": "Breakpoint: before tool get_capital_city",
                     "args": {"country": "France"}}}  # fmt: skip


def connected(client: Client, key: str) -> str:
    answer = register(client, key, {"agents": AGENTS, "root_agent": "capitals", "host": "box"})
    return str(answer.json()["process"])


def ingested(key: str, conversation: str = "s1") -> str:
    """Spans of ``conversation`` sent with ``key``: its session's id."""
    sent = request_of(span("5" * 32, "5" * 16, "invoke_agent capitals",
                           gen_ai__conversation__id=conversation))  # fmt: skip
    post(sent.SerializeToString(), key)
    return session_id_for(IngestKey.objects.get(), conversation)


def page_pending(client: Client, session_id: str) -> list[dict[str, Any]]:
    answer = client.get(f"/sessions/{session_id}/confirmations/")
    assert answer.status_code == 200, answer.content
    found: list[dict[str, Any]] = answer.json()["pending"]
    return found


def answer_on_page(client: Client, session_id: str, request_id: str, **form: str) -> Any:
    return client.post(f"/sessions/{session_id}/confirmations/{request_id}/", form)


@pytest.mark.django_db
def test_a_pause_is_listed_answered_once_taken_and_found_again_by_a_new_process(
    alice: User, bob: User, operator_user: User
) -> None:
    app, key = Client(), new_key(alice)
    token = connected(app, key)
    # AgentDash has no session of s1 yet: the pause is named again with the next poll.
    assert controls(app, key, token, "s1", pauses=[PAUSE]).json()["answers"] == []
    assert not RemotePause.objects.exists()
    session_id = ingested(key)
    assert controls(app, key, token, "s1", pauses=[PAUSE]).json()["answers"] == []
    controls(app, key, token, "s1", pauses=[PAUSE])  # named again: still one pause
    owner, stranger, operator = Client(), Client(), Client()
    owner.force_login(alice)
    stranger.force_login(bob)
    operator.force_login(operator_user)
    [listed] = page_pending(owner, session_id)
    assert listed["request_id"].startswith("remote-")
    assert (listed["tool"], listed["args"], listed["call_id"]) == (
        "get_capital_city", {"country": "France"}, "call-1",
    )  # fmt: skip
    assert listed["remote"] == {"host": "box", "pid": None, "connected": True}
    assert SessionChange.objects.filter(session_id=session_id, kind="pause").count() == 1
    # Someone else's session is not theirs to see, nor to answer.
    assert stranger.get(f"/sessions/{session_id}/confirmations/").status_code == 404
    request_id = listed["request_id"]
    assert answer_on_page(stranger, session_id, request_id, decision="approve").status_code == 404
    # The owner answers, with the arguments edited; the breakpoint's key is kept.
    edited = json.dumps({"args": {"country": "Japan"}})
    done = answer_on_page(owner, session_id, request_id, decision="approve", payload=edited)
    assert done.status_code == 202 and done.json() == {"run": None, "remote": "answered"}
    again = answer_on_page(operator, session_id, request_id, decision="deny", reason="no")
    assert again.status_code == 409
    assert page_pending(owner, session_id) == []
    expected = {"id": PAUSE["id"], "session": "s1", "decision": "approve", "reason": "",
                "payload": {"args": {"country": "Japan"}, "breakpoint": PAUSE["hint"]}}  # fmt: skip
    assert controls(app, key, token, "s1", pauses=[PAUSE]).json()["answers"] == [expected]
    audit = AuditEntry.objects.get(action="confirmation.answer", target_id=request_id)
    assert audit.before["args"] == {"country": "France"} and audit.after == {
        k: v for k, v in expected.items() if k not in ("id", "session")
    }
    controls(app, key, token, "s1", taken=[{"id": PAUSE["id"], "session": "s1"}])
    assert RemotePause.objects.get().status == RemotePause.Status.TAKEN
    # The app restarted and resumed the same call: a new process names the same pause and
    # is given the answer that was taken before.
    token2 = connected(app, key)
    assert controls(app, key, token2, "s1", pauses=[PAUSE]).json()["answers"] == [expected]
    assert RemotePause.objects.count() == 1


@pytest.mark.django_db
def test_a_pause_the_app_ended_by_its_rule_is_no_longer_answerable(alice: User) -> None:
    app, key = Client(), new_key(alice)
    token = connected(app, key)
    session_id = ingested(key)
    confirmation = {**PAUSE, "id": "confirmation:call-1", "kind": "confirmation", "payload": None}
    controls(app, key, token, "s1", pauses=[confirmation])
    owner = Client()
    owner.force_login(alice)
    [listed] = page_pending(owner, session_id)
    step = answer_on_page(owner, session_id, listed["request_id"], decision="step")
    assert step.status_code == 400 and "breakpoints only" in step.json()["error"]["message"]
    why = "no answer within 600 s: deny by the app's rule"
    ended = [{"id": confirmation["id"], "session": "s1", "why": why}]
    controls(app, key, token, "s1", ended=ended)
    assert page_pending(owner, session_id) == []
    late = answer_on_page(owner, session_id, listed["request_id"], decision="approve")
    assert late.status_code == 409
    assert RemotePause.objects.get().ended_why == why


@pytest.mark.django_db
def test_breakpoints_reach_the_processes_of_their_app_and_session(
    alice: User, operator_user: User
) -> None:
    app, key = Client(), new_key(alice)
    token = connected(app, key)
    session_id = ingested(key)
    project = IngestKey.objects.get().project
    breakpoint_add(agent_name=project, kind="before_tool", tool_name="get_capital_city",
                   session_id=session_id, actor=operator_user)  # fmt: skip
    breakpoint_add(agent_name="capitals", kind="before_model", actor=operator_user)
    breakpoint_add(agent_name="someone_else", kind="before_model", actor=operator_user)
    found = controls(app, key, token, "s1").json()["breakpoints"]
    assert sorted(found, key=lambda b: b["kind"]) == [
        {"agent": "capitals", "session": None, "kind": "before_model", "tool": "", "outcome": ""},
        {"agent": None, "session": "s1", "kind": "before_tool", "tool": "get_capital_city",
         "outcome": ""},
    ]  # fmt: skip
    # Without naming s1, its breakpoint is not sent.
    assert [b["kind"] for b in controls(app, key, token).json()["breakpoints"]] == ["before_model"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("pauses", "said"),
    [
        ("x", "pauses must be a list"),
        ([1], "each pause must be an object"),
        ([{**PAUSE, "kind": "nap"}], "kind must be one of"),
        ([{**PAUSE, "id": ""}], "id must be a string"),
        ([{**PAUSE, "session": 5}], "session must be a string"),
        ([{**PAUSE, "args": [1]}], "args must be an object"),
        ([{**PAUSE, "args": {"x": "y" * 300_000}}], "under"),
        ([PAUSE] * 51, "at most 50"),
    ],
)
def test_bad_pauses_say_what_is_wrong(alice: User, pauses: Any, said: str) -> None:
    app, key = Client(), new_key(alice)
    token = connected(app, key)
    answer = controls(app, key, token, pauses=pauses)
    assert answer.status_code == 400 and said in answer.json()["error"]["message"]
    for field in ("taken", "ended"):
        bad = controls(app, key, token, **{field: [{"id": 1}]})
        assert bad.status_code == 400 and field in bad.json()["error"]["message"]


@pytest.mark.django_db
def test_hostile_text_in_a_pause_is_stored_as_text(alice: User) -> None:
    app, key = Client(), new_key(alice)
    token = connected(app, key)
    session_id = ingested(key)
    hostile = {**PAUSE, "hint": "<img src=x onerror=alert(1)>\x00\ud800",
               "args": {"q\x00": "\udfff" + "[" * 50}}  # fmt: skip
    assert controls(app, key, token, "s1", pauses=[hostile]).status_code == 200
    owner = Client()
    owner.force_login(alice)
    [listed] = page_pending(owner, session_id)
    assert listed["hint"] == "<img src=x onerror=alert(1)>\ufffd\ufffd"  # text, never markup
    assert listed["args"] == {"q\ufffd": "\ufffd" + "[" * 50}


# ── the client's side ────────────────────────────────────────────────────────────────────
def test_an_unanswered_pause_ends_by_the_apps_rule_and_says_so() -> None:
    pauses = Pauses(timeout_s=0.2, default="deny")
    asked = Pause(id="confirmation:c1", session="s1", kind="confirmation", payload={"x": 1})
    answer = asyncio.run(pauses.wait(asked))
    assert answer["decision"] == "deny" and "within 0.2 s" in answer["reason"]
    report = pauses.report()
    assert report["pauses"] == [] and report["ended"][0]["id"] == "confirmation:c1"
    approving = Pauses(timeout_s=0.2, default="approve")
    taken = asyncio.run(approving.wait(Pause(id="b", session="s1", kind="breakpoint", payload=7)))
    assert (taken["decision"], taken["payload"]) == ("approve", 7)
    with pytest.raises(ValueError, match="pause_default"):
        Pauses(default="maybe")
    with pytest.raises(ValueError, match="positive"):
        Pauses(timeout_s=0)


def test_a_waiting_pause_takes_its_answer_from_a_poll() -> None:
    pauses = Pauses(timeout_s=None)
    asked = Pause(id="breakpoint:c2", session="s1", kind="breakpoint", tool="t")

    async def waited() -> dict[str, Any]:
        waiting = asyncio.create_task(pauses.wait(asked))
        while not pauses.report()["pauses"]:
            await asyncio.sleep(0.01)
        sent = pauses.report()
        assert sent["pauses"][0]["id"] == "breakpoint:c2" and pauses.wake.is_set()
        other = {"id": "breakpoint:other", "session": "s1", "decision": "approve"}
        bad = {"id": "breakpoint:c2", "session": "s1", "decision": "explode"}
        pauses.reported(sent, {"answers": [other, bad]})  # neither is this pause's answer
        await asyncio.sleep(0.1)
        assert not waiting.done()
        given = {"id": "breakpoint:c2", "session": "s1", "decision": "step", "payload": {}}
        pauses.reported(sent, {"answers": [given]})
        return await waiting

    assert asyncio.run(waited()) == {"decision": "step", "payload": {}, "reason": ""}
    sent = pauses.report()
    assert sent["taken"] == [{"id": "breakpoint:c2", "session": "s1"}]
    pauses.reported(sent, {})
    assert pauses.report()["taken"] == []  # told once


def test_where_a_process_pauses() -> None:
    pauses = Pauses(root_agent="root")
    pauses.breakpoints = [
        {"agent": None, "session": "s1", "kind": "before_tool", "tool": "search"},
        {"agent": "root", "session": None, "kind": "before_model"},
        {"agent": "writer", "session": None, "kind": "callback_outcome", "outcome": "raised"},
    ]
    assert pauses.reason(session="s1", agent="child", tool="search") == (
        "Breakpoint: before tool search"
    )
    assert pauses.reason(session="s2", agent="child", tool="search") is None  # s1's alone
    assert pauses.reason(session="s2", agent="child", tool=None) == (
        "Breakpoint: before a model call of child"  # set on the root agent: its tree's too
    )
    pauses.outcome(session="s3", callback="guard", outcome="raised")
    assert pauses.reason(session="s3", agent="writer", tool="draft") == (
        "Breakpoint after callback guard raised: paused before tool draft"
    )
    assert pauses.reason(session="s3", agent="writer", tool="draft") is None  # once
    pauses.step_next("s4")
    assert pauses.reason(session="s4", agent="x", tool="t") == "Step: paused before tool t"
    assert pauses.reason(session="s4", agent="x", tool="t") is None
