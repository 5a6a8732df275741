"""A generated set of runs and steps with known counts (the Monitor's tests read their numbers
against it), and how the tests read the Monitor and the sessions list."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.test import Client

from agentdash.agent_sessions.external import external_session_ensure
from agentdash.agent_sessions.models import AgentSession
from agentdash.ingest.keys import ingest_key_create
from agentdash.ingest.services import session_id_for
from agentdash.remote.models import RemotePause
from agentdash.remote.pauses import pause_answer, pauses_record
from agentdash.remote.services import remote_process_register
from agentdash.runs.models import Run
from agentdash.spans.services import span_upsert
from tests.agentdash.stored import session_of

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
RANGE = {"from": "2026-11-20T09:00:00+00:00", "to": "2026-11-20T11:00:00+00:00"}


def ns(moment: datetime) -> int:
    return int(moment.timestamp() * 1e9)


def run(session: AgentSession, n: int, status: str, minute: int, seconds: float) -> None:
    at = T0 + timedelta(minutes=minute)
    made = Run.objects.create(
        session=session, agent_name=session.app_name, invocation_id=f"e-{session.pk}-{n}",
        status=status, message={}, started_at=at, finished_at=at + timedelta(seconds=seconds),
    )  # fmt: skip
    Run.objects.filter(pk=made.pk).update(created_at=at)


def step(session: AgentSession, n: int, kind: str, minute: int, seconds: float,
         **attributes: Any) -> None:  # fmt: skip
    start = T0 + timedelta(minutes=minute)
    span_upsert(
        trace_id=f"{n:032x}", span_id=f"{n:016x}", name=f"{kind} {n}", start_time=ns(start),
        end_time=ns(start + timedelta(seconds=seconds)), session_id=session.pk,
        status=attributes.pop("status", "ok"),
        attributes={"agentdash.span.kind": kind, **attributes},
    )  # fmt: skip


def generated_set(alice: User, bob: User) -> dict[str, AgentSession]:
    """alice: 4 runs of capital_agent (2 succeeded, 1 failed, 1 cancelled) at 09:05–09:35,
    3 model calls (1 s, 2 s, 4 s; 10+20+30 in, 1+2+3 out), 2 tool calls (one failed);
    bob: 1 failed run of support_agent at 10:10, 1 tool call; an ingested session of alice's:
    1 succeeded run."""
    mine = session_of(alice, "s-alice", "capital_agent")
    theirs = session_of(bob, "s-bob", "support_agent")
    outside = session_of(alice, "otlp-" + "a" * 40, "weather-app")
    for n, (status, minute, seconds) in enumerate(
        [("succeeded", 5, 10), ("succeeded", 15, 20), ("failed", 25, 30), ("cancelled", 35, 5)]
    ):
        run(mine, n, status, minute, seconds)
    run(theirs, 0, "failed", 70, 40)
    run(outside, 0, "succeeded", 40, 1)
    usage = {"gen_ai.request.model": "gemini-x"}
    for n, (minute, seconds, tokens_in, tokens_out) in enumerate(
        [(6, 1, 10, 1), (16, 2, 20, 2), (26, 4, 30, 3)], start=1
    ):
        tokens = {"gen_ai.usage.input_tokens": tokens_in, "gen_ai.usage.output_tokens": tokens_out}
        step(mine, n, "model", minute, seconds, **usage, **tokens)
    step(mine, 10, "tool", 7, 0.5, **{"gen_ai.tool.name": "get_capital"})
    step(mine, 11, "tool", 27, 0.25, status="error", **{"gen_ai.tool.name": "get_capital"})
    step(theirs, 20, "tool", 71, 1, **{"gen_ai.tool.name": "lookup_order"})
    return {"mine": mine, "theirs": theirs, "outside": outside}


def stats_of(user: User, **params: str) -> Any:
    client = Client()
    client.force_login(user)
    answer = client.get("/monitor/stats.json", {**RANGE, **params})
    assert answer.status_code == 200, answer.content
    return answer.json()


def listed(user: User, **params: str) -> set[str]:
    """The sessions the sessions list shows ``user`` with these filters."""
    client = Client()
    client.force_login(user)
    page = client.get("/", params)
    assert page.status_code == 200
    return {
        s
        for s in ("s-alice", "s-bob", "otlp-" + "a" * 40)
        if f'data-session-id="{s}"' in page.content.decode()
    }


def remote_pause(owner: User, *, minute: int, decision: str, waited_s: float) -> str:
    """A remote app's confirmation (an ingested session of ``owner``'s, through the real
    pause paths) asked ``minute`` after 09:00 and answered ``decision`` ``waited_s`` later;
    its session's id."""
    key, _ = ingest_key_create(name="k", project="weather-app", owner=owner, actor=owner)
    process = remote_process_register(key=key, host="h", pid=1, versions={}, agents=[],
                                      root_agent="weather")  # fmt: skip
    session_id = session_id_for(key, "trip")
    external_session_ensure(session_id=session_id, app_name="weather-app", owner_id=owner.pk,
                            title="a trip", first_message="")  # fmt: skip
    pauses_record(process=process, pauses=[
        {"id": "confirmation:c1", "session": "trip", "kind": "confirmation", "tool": "book"},
    ])  # fmt: skip
    pause = RemotePause.objects.get(session_id=session_id)
    asked = T0 + timedelta(minutes=minute)
    RemotePause.objects.filter(pk=pause.pk).update(asked_at=asked)
    pause_answer(session=pause.session, request_id=pause.request_id, decision=decision,
                 actor=owner)  # fmt: skip
    RemotePause.objects.filter(pk=pause.pk).update(answered_at=asked + timedelta(seconds=waited_s))
    return session_id
