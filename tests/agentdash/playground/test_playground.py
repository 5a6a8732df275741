"""The playground (docs/PLAYGROUND.md) over HTTP: a model span's call pre-filled from its
attributes, edited and sent to the offline model; the answer kept as the playground's own
run (tokens, latency) beside the original with a word diff — never an event or a span of the
session —; kept as an eval case or as the agent's next instruction version; bad input said
and nothing stored; operators only."""

from __future__ import annotations

import gc
import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import AsyncClient, Client

from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.core.models import AuditEntry
from agentdash.evals.models import EvalSetRecord
from agentdash.instructions.models import InstructionVersion
from agentdash.playground.models import PlaygroundRun
from agentdash.spans.models import Span
from agentdash.spans.services import span_upsert
from tests.agentdash.stored import session_of
from tests.waits import eventually

pytestmark = [pytest.mark.django_db, pytest.mark.database]

TRACE, SPAN = "c" * 32, "d" * 16
SYSTEM = "You are a careful data analyst. Say the figures plainly."
ASKED = "hello there"


@pytest.fixture
def session(alice: User) -> AgentSession:
    found = session_of(alice, "s-play", "analyst")
    attributes = {
        "agentdash.span.kind": "model", "gen_ai.operation.name": "generate_content",
        "gen_ai.request.model": "offline", "gen_ai.agent.name": "analyst",
        "gen_ai.system_instructions": json.dumps([{"type": "text", "content": SYSTEM}]),
        "gen_ai.input.messages": json.dumps([
            {"role": "user", "parts": [{"type": "text", "content": ASKED}]}]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
            {"type": "text", "content": 'Offline model: you said "hello there". My '
             "instructions: You are a careful data analyst."}]}]),
        "gen_ai.tool.definitions": json.dumps([{"type": "function", "name": "run_python",
                                                "description": "Runs Python"}]),
        "gen_ai.usage.input_tokens": 40, "gen_ai.usage.output_tokens": 12,
        "gen_ai.request.temperature": 0.2,
    }  # fmt: skip
    span_upsert(trace_id=TRACE, span_id=SPAN, name="call_llm offline", start_time=1_000_000,
                end_time=9_000_000, session_id=found.pk, attributes=attributes)  # fmt: skip
    return found


def url(session: AgentSession, span: str = SPAN) -> str:
    return f"/sessions/{session.pk}/playground/{TRACE}/{span}/"


def form(**changes: Any) -> dict[str, Any]:
    data = {"action": "run", "model": "offline", "system": SYSTEM,
            "skeleton": json.dumps([{"role": "user", "parts": ["text"]}]),
            "text-0-0": ASKED, "tools": "[]", "temperature": "0.2"}  # fmt: skip
    data.update(changes)
    return data


def test_a_call_is_prefilled_edited_run_and_kept_apart_from_the_session(
    session: AgentSession, operator_user: User
) -> None:
    client = Client()
    client.force_login(operator_user)
    page = client.get(url(session)).content.decode()
    assert SYSTEM in page and ASKED in page and "run_python" in page and 'value="0.2"' in page
    events, spans = SessionEvent.objects.count(), Span.objects.count()

    sent = client.post(url(session), form(system="You answer in riddles. Always."))
    assert sent.status_code == 302
    run = PlaygroundRun.objects.get()
    assert sent["Location"] == f"{url(session)}?run={run.pk}"
    assert "My instructions: You answer in riddles." in run.text and not run.error
    assert run.input_tokens and run.output_tokens and run.latency_ms is not None
    assert run.request["system"] == "You answer in riddles. Always."
    assert (SessionEvent.objects.count(), Span.objects.count()) == (events, spans)  # apart
    assert AuditEntry.objects.filter(action="playground.call").count() == 1

    shown = client.get(sent["Location"]).content.decode()
    assert '<span class="w-ins">riddles</span>' in shown
    assert '<span class="w-del">careful data analyst</span>' in shown
    assert "You answer in riddles. Always." in shown  # the form keeps what was sent

    kept = client.post(sent["Location"], {"action": "save_case", "eval_set_id": "pg",
                                          "eval_id": "riddles"})  # fmt: skip
    assert kept.status_code == 302
    case = EvalSetRecord.objects.get(eval_set_id="pg").data["eval_cases"][0]
    assert case["eval_id"] == "riddles"
    turn = case["conversation"][0]
    assert turn["user_content"]["parts"][0]["text"] == ASKED
    assert "riddles" in turn["final_response"]["parts"][0]["text"]

    saved = client.post(sent["Location"], {"action": "save_instruction"})
    assert saved.status_code == 302
    saved_text = InstructionVersion.objects.get(agent_name="analyst").text
    assert saved_text == "You answer in riddles. Always."


@pytest.mark.parametrize(
    ("changes", "said"),
    [({"model": "nosuch-model-1"}, "no model class serves"),
     ({"text-0-0": ""}, ""),  # an empty message is still a message: it runs
     ({"skeleton": "{not json"}, "not JSON"),
     ({"skeleton": "[]"}, "needs a message from the user"),
     ({"tools": '{"a": NaN}'}, "not JSON"),
     ({"temperature": "hot"}, "a number"),
     ({"skeleton": json.dumps([{"role": "user", "parts": ["tool_call"]}]),
       "json-0-0": "[1]"}, "a part is a JSON object")],
)  # fmt: skip
def test_bad_input_is_said_and_nothing_is_kept(
    session: AgentSession, operator_user: User, changes: dict[str, str], said: str
) -> None:
    client = Client()
    client.force_login(operator_user)
    answer = client.post(url(session), form(**changes))
    if not said:
        assert answer.status_code == 302
        return
    assert answer.status_code == 200 and said in answer.content.decode()
    assert not PlaygroundRun.objects.exists()


def test_only_operators_and_only_model_spans(
    session: AgentSession, alice: User, bob: User, operator_user: User
) -> None:
    client = Client()
    client.force_login(alice)  # her session, but the playground is an operator's tool
    assert client.get(url(session)).status_code == 403
    assert client.post(url(session), form()).status_code == 403
    client.force_login(bob)
    assert client.get(url(session)).status_code == 404  # not his: not confirmed
    client.force_login(operator_user)
    span_upsert(trace_id=TRACE, span_id="e" * 16, name="execute_tool x", start_time=1,
                end_time=2, session_id=session.pk,
                attributes={"agentdash.span.kind": "tool"})  # fmt: skip
    assert client.get(url(session, "e" * 16)).status_code == 404
    assert client.get(url(session, "f" * 16)).status_code == 404
    assert not PlaygroundRun.objects.exists()


@pytest.mark.django_db(transaction=True)  # the view reads and writes in a thread of its own
async def test_a_streamed_run_sends_its_answer_as_it_comes_then_the_run_it_kept(
    session: AgentSession, operator_user: User
) -> None:
    """The page's script asks for the answer streamed (``stream=1``): one JSON object a line,
    the pieces of text as the model sends them, then the run kept — the same run the form
    keeps. What the model says is data in those lines, never markup."""
    client = AsyncClient()
    await client.aforce_login(operator_user)
    hostile = "<img src=x onerror=alert(1)> \u2028 done"
    answer = await client.post(url(session), {**form(**{"text-0-0": hostile}), "stream": "1"})
    assert answer.status_code == 200 and answer["Content-Type"] == "application/x-ndjson"
    body = b"".join([chunk async for chunk in answer.streaming_content])
    lines = [json.loads(line) for line in body.split(b"\n") if line]
    assert body.isascii()  # escaped: a model's line separator cannot split a line
    pieces = [line["text"] for line in lines[:-1]]
    assert len(pieces) >= 2 and all(set(line) == {"text"} for line in lines[:-1])
    run = await PlaygroundRun.objects.aget()
    assert "".join(pieces) == run.text and hostile in run.text
    assert lines[-1] == {"run": run.pk, "url": f"{url(session)}?run={run.pk}", "error": ""}
    assert await AuditEntry.objects.filter(action="playground.call").acount() == 1
    # Refused before anything is sent: the page as the form gets it, no stream, nothing kept.
    refused = await client.post(url(session), {**form(model="nosuch-model-1"), "stream": "1"})
    assert refused.status_code == 200 and refused["Content-Type"].startswith("text/html")
    assert await PlaygroundRun.objects.acount() == 1


@pytest.mark.django_db(transaction=True)  # the view reads and writes in a thread of its own
async def test_a_streamed_run_is_kept_when_its_page_closes_mid_answer(
    session: AgentSession, operator_user: User
) -> None:
    """The page goes after the first piece (the server stops sending: the response's
    iterator is closed, as the server closes it on a disconnect). The model has been asked
    and its tokens spent: the call goes on to its end and its run is kept, whole."""
    client = AsyncClient()
    await client.aforce_login(operator_user)
    answer = await client.post(url(session), {**form(), "stream": "1"})
    stream = answer.streaming_content
    first = json.loads(await anext(stream))
    await stream.aclose()
    del stream, answer
    gc.collect()  # what was left of the response is finalized, its iterators closed
    run = await eventually(lambda: PlaygroundRun.objects.afirst(), "the run to be kept")
    assert run.text.startswith(first["text"]) and len(run.text) > len(first["text"])
    assert not run.error and run.output_tokens
    assert await AuditEntry.objects.filter(action="playground.call").acount() == 1
