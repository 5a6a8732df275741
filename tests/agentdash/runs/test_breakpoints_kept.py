"""A run reads its breakpoints once and keeps them until one may have changed
(``controls.breakpoint_watch``): a breakpoint added while a run waits in a tool — here, or
in another process that only announces it over the ``controls`` group — still pauses the
run at its next step; with nobody hearing the group, every step reads them afresh."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from google.genai import types

from agentdash.agent_sessions.models import AgentSession
from agentdash.controls import breakpoint_watch
from agentdash.controls import breakpoints as breakpoints_module
from agentdash.controls.breakpoints import RunBreakpoints, breakpoint_add
from agentdash.controls.models import Breakpoint
from agentdash.controls.switch_broadcast import breakpoints_change_publish
from agentdash.runs.confirmation_requests import pending_confirmations
from agentdash.runs.models import Run
from agentdash.runs.services import arun_enqueue
from runtime import LlmAgent, ScriptedLlm
from tests.agentdash.runs.conftest import says, wait_for
from tests.agentdash.runs.gates import Gate
from tests.agentdash.runs.test_confirmations import run_ended_or_waiting
from tests.agentdash.stored import session_of

pytestmark = pytest.mark.django_db(transaction=True)

AGENT = "bp_kept"
LOOKUPS = 6


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each read of the stored breakpoints (the real read, counted)."""
    seen: list[str] = []
    read = breakpoints_module.breakpoints_for

    def counted(**kwargs: Any) -> Any:
        seen.append(kwargs["session_id"])
        return read(**kwargs)

    monkeypatch.setattr(breakpoints_module, "breakpoints_for", counted)
    return seen


@pytest.fixture
def gate(register: Callable[..., None]) -> Gate:
    """The agent waits in ``slow_lookup`` (the gate), then calls ``transfer``."""
    held = Gate()

    def transfer(amount: int) -> dict[str, Any]:
        """Sends money."""
        return {"status": "sent", "amount": amount}

    model = ScriptedLlm(
        responses=[
            types.FunctionCall(name="slow_lookup", args={"topic": "rates"}),
            types.FunctionCall(name="transfer", args={"amount": 5}),
            "Sent.",
        ]
    )
    register(LlmAgent(name=AGENT, model=model, tools=[held.tool, transfer]))
    return held


def owned(owner: User) -> AgentSession:
    return session_of(owner, uuid.uuid4().hex, app_name=AGENT)


async def held_run(owner: User, gate: Gate) -> tuple[AgentSession, Run]:
    """A run of the agent, waiting in its first tool (its first steps' breakpoints read)."""
    session = await sync_to_async(owned)(owner)
    run = await arun_enqueue(
        session=session, agent_name=AGENT, message=says("pay"), requested_by=owner
    )
    await asyncio.wait_for(gate.entered.wait(), 60)
    return session, run


async def paused_before_transfer(session: AgentSession, run: Run, gate: Gate) -> None:
    gate.release.set()
    stored = await run_ended_or_waiting(run.pk)
    assert stored.status == Run.Status.WAITING, stored.status
    (request,) = await sync_to_async(pending_confirmations)(session_id=session.pk)
    assert request.hint == "Breakpoint: before tool transfer"


async def test_a_breakpoint_added_here_mid_run_pauses_the_next_step(
    gate: Gate, host: Any, alice: User, operator_user: User, reads: list[str]
) -> None:
    session, run = await held_run(alice, gate)
    assert breakpoint_watch.trusted_generation() is not None  # the run host's listener hears
    assert reads == [session.pk]  # the first model call read them; the tool call kept them
    await sync_to_async(breakpoint_add)(
        agent_name=AGENT, kind="before_tool", tool_name="transfer", actor=operator_user
    )
    await paused_before_transfer(session, run, gate)


@pytest.fixture
def no_reload(settings: Any) -> None:
    """The listeners' periodic reload (which also has runs read again) out of the way."""
    settings.AGENTDASH = {**settings.AGENTDASH, "CONTROLS_RELOAD_S": 3600.0}


async def test_a_breakpoint_another_process_announces_pauses_the_next_step(
    gate: Gate, no_reload: None, host: Any, alice: User
) -> None:
    session, run = await held_run(alice, gate)
    # Another process stored it: here only its announcement over the group arrives.
    await Breakpoint.objects.acreate(agent_name=AGENT, kind="before_tool", tool_name="transfer")
    before = breakpoint_watch.trusted_generation()
    await breakpoints_change_publish()

    async def heard() -> bool:
        return breakpoint_watch.trusted_generation() != before

    await wait_for(heard, what="the listener to hear the announcement")
    await paused_before_transfer(session, run, gate)


def agent_step(session_id: str) -> Any:
    """What the source reads of a step's context: the agent, its root, the session."""
    agent = SimpleNamespace(name="helper", root_agent=SimpleNamespace(name=AGENT))
    return SimpleNamespace(agent=agent, session=SimpleNamespace(id=session_id))


@pytest.fixture
def hearing() -> Iterator[Callable[[bool], None]]:
    """``hearing(True)``: a listener of this process hears the group (until the test ends)."""
    token = object()
    yield lambda yes: breakpoint_watch.listener_hearing(token, yes)
    breakpoint_watch.listener_hearing(token, False)


async def test_kept_while_heard_read_again_after_a_change_and_every_step_unheard(
    alice: User, reads: list[str], hearing: Callable[[bool], None]
) -> None:
    session = await sync_to_async(owned)(alice)
    step = agent_step(session.pk)
    source = RunBreakpoints()

    for _ in range(3):  # nobody hears the group: a change elsewhere would go unseen
        assert (await source(step)).empty
    assert len(reads) == 3

    hearing(True)
    for _ in range(LOOKUPS):
        assert (await source(step)).empty
    assert len(reads) == 4  # read once, then kept

    await Breakpoint.objects.acreate(agent_name=AGENT, kind="before_model", session=session)
    assert (await source(step)).empty  # written without a word: kept until told
    breakpoint_watch.breakpoints_changed()
    assert (await source(step)).before_model
    assert (await source(step)).before_model
    assert len(reads) == 5

    another = RunBreakpoints()  # a new run reads for itself
    assert (await another(step)).before_model
    assert len(reads) == 6

    hearing(False)  # the layer lost: every step reads again
    await source(step)
    await source(step)
    assert len(reads) == 8


def root_step(session_id: str) -> Any:
    """A step of the root agent itself (its own root)."""
    agent = SimpleNamespace(name=AGENT)
    agent.root_agent = agent
    return SimpleNamespace(agent=agent, session=SimpleNamespace(id=session_id))


async def test_read_ahead_is_the_root_agents_first_read_while_heard(
    alice: User, reads: list[str], hearing: Callable[[bool], None]
) -> None:
    session = await sync_to_async(owned)(alice)
    await Breakpoint.objects.acreate(agent_name=AGENT, kind="before_model", session=session)

    unheard = RunBreakpoints()
    await sync_to_async(unheard.read_ahead)(agent_name=AGENT, session_id=session.pk)
    assert reads == []  # nothing kept while nobody hears: each step reads
    assert (await unheard(root_step(session.pk))).before_model
    assert len(reads) == 1

    hearing(True)
    source = RunBreakpoints()
    await sync_to_async(source.read_ahead)(agent_name=AGENT, session_id=session.pk)
    assert len(reads) == 2
    assert (await source(root_step(session.pk))).before_model
    assert (await source(root_step(session.pk))).before_model
    assert len(reads) == 2  # the root agent's steps use what was read ahead
    assert (await source(agent_step(session.pk))).before_model  # a sub-agent reads its own
    assert len(reads) == 3

    breakpoint_watch.breakpoints_changed()  # read ahead, then changed: read again
    assert (await source(root_step(session.pk))).before_model
    assert len(reads) == 4
