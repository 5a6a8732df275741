"""The benchmark workload on AgentDash's whole path, the embedded default: run by the project
venv's python, speaking the protocol of ``_harness.py``.

The same agent, script, callbacks and tool as ``workload_ours.py`` and ``workload_adk.py``,
registered as an agent of a Django process on the embedded default (SQLite in a temporary
directory, migrated; the in-memory channel layer; the inline executor; ``DEBUG`` off). An
invocation is a chat message as the site takes one: a session stored, the run queued
(``arun_enqueue``), claimed and executed by the inline executor with the database's session
service, every span traced, stored and published by the live pipeline — timed from before the
enqueue until a listener on the session's channel-layer group (what each websocket consumer
is) has received the run's end and the final version of every span.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import sys
import tempfile
import time
import tomllib
import uuid
from pathlib import Path
from typing import Any

from _harness import (
    ANSWER,
    QUESTION,
    USER_ID,
    Invocation,
    get_capital_city,
    now_ns,
    package_versions,
    serve,
)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from google.genai import types  # noqa: E402
from workload_ours import _model_turn, after_model, after_tool, before_model, before_tool  # noqa: E402

from runtime import Agent, FunctionTool, ScriptedLlm  # noqa: E402

AGENT = "capitals"
GIVE_UP_S = 30.0  # an invocation whose end is not published by then is a failure, said
SCRIPT_TURNS = 200_000  # the scripted model's replies: enough for every round of a run
FINISHED = ("succeeded", "failed", "cancelled")


def _agent() -> Agent:
    call = types.FunctionCall(name="get_capital_city", args={"country": "France"})
    script = [_model_turn(types.Part(function_call=call)), _model_turn(types.Part(text=ANSWER))]
    return Agent(
        name=AGENT,
        model=ScriptedLlm(responses=script * (SCRIPT_TURNS // 2)),
        instruction="Answer with the capital city of the country asked about.",
        tools=[FunctionTool(get_capital_city)],
        before_model_callback=before_model,
        after_model_callback=after_model,
        before_tool_callback=before_tool,
        after_tool_callback=after_tool,
    )


root_agent = _agent()  # AGENTDASH_AGENTS names it: workload_full:root_agent


def _django(tmp: str) -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="agentdash.settings",
        DATABASE_URL=f"sqlite:///{tmp}/agentdash.sqlite3",
        AGENTDASH_VAR_DIR=tmp,
        AGENTDASH_EXECUTOR="inline",
        AGENTDASH_AGENTS="workload_full:root_agent",
        DEBUG="0",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="localhost",
        LOG_LEVEL="WARNING",
    )
    os.environ.pop("REDIS_URL", None)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


async def make_round(n: int) -> Any:
    from channels.layers import get_channel_layer
    from django.conf import settings

    from agentdash.agent_sessions.models import AgentSession
    from agentdash.live.groups import session_group
    from agentdash.runs.services import arun_enqueue

    assert not settings.DEBUG
    layer = get_channel_layer()
    assert layer is not None

    async def invoke(i: int) -> Invocation:
        session = await AgentSession.objects.acreate(
            id=uuid.uuid4().hex, app_name=AGENT, user_id=USER_ID, last_update_time=time.time()
        )
        channel = await layer.new_channel()
        await layer.group_add(session_group(session.id), channel)
        message = types.Content(role="user", parts=[types.Part(text=QUESTION)])
        start = now_ns()
        await arun_enqueue(session=session, agent_name=AGENT, message=message, requested_by=None)
        seen = await _until_ended(layer, channel, session.id)
        elapsed = now_ns() - start
        await layer.group_discard(session_group(session.id), channel)
        return Invocation(ns=elapsed, events=seen["events"], final_text=seen["text"])

    return invoke


async def _until_ended(layer: Any, channel: str, session_id: str) -> dict[str, Any]:
    """Read the session's published changes as a websocket consumer does — a gap in the
    seqs filled from the database — until the run has ended, its final answer has come and
    every span seen has its final version; what they said (events, the answer)."""
    from asgiref.sync import sync_to_async

    from agentdash.changes.items import items_after

    spans: dict[tuple[str, str], bool] = {}
    events: dict[str, str] = {}
    state = {"ended": False, "answer": "", "last": 0}

    def take(item: dict[str, Any]) -> None:
        state["last"] = item["seq"]
        data = item["data"]
        if data is None:
            return
        if item["kind"] == "span":
            key = (data["trace_id"], data["span_id"])
            spans[key] = spans.get(key, False) or data["end_time"] is not None
        elif item["kind"] == "event":
            events[data["id"]] = data["html"]
            if data["final"] and data["author"] == AGENT:
                state["answer"] = data["html"]
        elif item["kind"] == "run":
            state["ended"] = state["ended"] or data["status"] in FINISHED

    while not (state["ended"] and state["answer"] and spans and all(spans.values())):
        try:
            message = await asyncio.wait_for(layer.receive(channel), GIVE_UP_S)
        except TimeoutError:
            untold = [key for key, done in spans.items() if not done]
            raise RuntimeError(
                f"nothing published for {GIVE_UP_S:.0f} s: run ended {state['ended']}, answer "
                f"{bool(state['answer'])}, spans without their final version {untold}"
            ) from None
        if message.get("type") != "session.changes":
            continue  # a span before it is stored (``spans``): its stored change follows
        for page in message.get("pages") or []:
            for item in json.loads(page["text"])["items"]:
                if item["seq"] <= state["last"]:
                    continue
                if item["seq"] > state["last"] + 1:  # a gap: the database has it
                    missed = await sync_to_async(items_after)(
                        session_id=session_id, after_seq=state["last"], limit=10_000
                    )
                    for found in missed:
                        if found["seq"] < item["seq"]:
                            take(found)
                take(item)
    # The stored event's text is rendered HTML: the answer, as a paragraph.
    answer = str(state["answer"])
    return {"events": len(events), "text": answer.removeprefix("<p>").split("</p>")[0]}


if __name__ == "__main__":
    versions = package_versions("agentdash", "google-genai", "opentelemetry-sdk", "django")
    if versions["agentdash"] == "not installed":
        with (ROOT / "pyproject.toml").open("rb") as f:
            versions["agentdash"] = tomllib.load(f)["project"]["version"] + " (checkout)"
    with tempfile.TemporaryDirectory(prefix="agentdash-bench-full-") as tmp:
        _django(tmp)
        serve("full", versions, make_round, otel=False)
