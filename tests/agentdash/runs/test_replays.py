"""Fork and replay through real runs: a fork carries its parent's callback switches with the
overrides asked for; a replay re-runs the parent's later user messages on the fork, one run
after another, and reproduces the parent's final answer when nothing changed — and gives
another when the state edit matters (the agent's instruction templates ``{city}``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError

from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.agent_sessions.services import session_create
from agentdash.controls.models import CallbackSetting
from agentdash.controls.services import callback_setting_set
from agentdash.core.models import AuditEntry
from agentdash.runs.forks import fork_create
from agentdash.runs.models import Replay, Run
from agentdash.runs.replays import replay_start
from agentdash.runs.services import arun_enqueue
from runtime import LlmAgent, ScriptedLlm
from runtime.models.llm_request import LlmRequest, system_instruction_text
from runtime.telemetry.attributes import CONTENT_CAPTURE
from tests.agentdash.runs.conftest import run_ended, says, wait_for
from tests.agentdash.stored import store_event

pytestmark = pytest.mark.django_db(transaction=True)

AGENT = "replay_echo"
MESSAGES = ("hello", "where do I live?", "thanks")


def echo(request: LlmRequest) -> str:
    """What the offline model would do: say back the instruction and the last message."""
    said = [c for c in request.contents if c.role == "user" and c.parts and c.parts[0].text]
    last = said[-1].parts[0].text if said and said[-1].parts else ""
    instruction = system_instruction_text(request).split("\n")[0]
    return f"{instruction} You said: {last}"


def log_calls(callback_context: Any, llm_request: Any) -> None:
    """A callback for the switches (does nothing)."""
    return None


@pytest.fixture
def echo_agent(register: Callable[..., None]) -> LlmAgent:
    agent = LlmAgent(
        name=AGENT,
        model=ScriptedLlm(responses=[echo] * 100),
        instruction="The user lives in {city}.",
        before_model_callback=log_calls,
    )
    register(agent)
    return agent


async def _parent(owner: User) -> AgentSession:
    """Alice's session: city Paris, three messages, each run to its end."""
    session = await sync_to_async(session_create)(
        app_name=AGENT, user_id=str(owner.pk), owner=owner, state={"city": "Paris"}
    )
    for text in MESSAGES:
        run = await arun_enqueue(
            session=session, agent_name=AGENT, message=says(text), requested_by=owner
        )
        assert (await run_ended(run.pk)).status == Run.Status.SUCCEEDED
    return session


@sync_to_async
def _texts(session_id: str) -> list[tuple[str, str]]:
    rows = SessionEvent.objects.filter(session_id=session_id).order_by("seq")
    return [
        (
            row.author,
            "".join(p.get("text", "") for p in (row.data.get("content") or {}).get("parts", [])),
        )
        for row in rows
    ]


@sync_to_async
def _event_id(session_id: str, seq: int) -> str:
    return SessionEvent.objects.get(session_id=session_id, seq=seq).event_id


async def _replayed(replay: Replay, count: int) -> list[Run]:
    async def done() -> Replay | None:
        found = await Replay.objects.aget(pk=replay.pk)
        return found if found.status != Replay.Status.ACTIVE else None

    finished = await wait_for(done, what="the replay to end")
    assert finished.status == Replay.Status.DONE, finished.error
    assert len(finished.run_ids) == count
    return [await Run.objects.aget(pk=pk) for pk in finished.run_ids]


async def test_a_fork_at_a_question_answers_it_under_the_forks_state(
    echo_agent: LlmAgent, host: Any, alice: User, operator_user: User
) -> None:
    parent = await _parent(alice)
    # Fork at the second question (event 3), the city changed: the fork answers it anew.
    fork = await sync_to_async(fork_create)(
        parent=parent, event_id=await _event_id(parent.pk, 3), actor=operator_user,
        state={"city": "Rome"},
    )  # fmt: skip
    (run,) = [r async for r in Run.objects.filter(session_id=fork.pk)]
    assert run.message_stored and run.message == says(MESSAGES[1]).model_dump(
        mode="json", exclude_none=True
    )
    assert (await run_ended(run.pk)).status == Run.Status.SUCCEEDED
    texts = await _texts(fork.pk)
    # The question is there once (the copy), then the answer to it.
    assert [t for t in texts if t[0] == "user"] == [("user", "hello"), ("user", MESSAGES[1])]
    assert texts[-1] == (AGENT, f"The user lives in Rome. You said: {MESSAGES[1]}")
    assert len(texts) == 5  # hello, its answer, the question, the state edit, the answer


async def test_a_fork_at_an_answer_runs_nothing(
    echo_agent: LlmAgent, host: Any, alice: User
) -> None:
    parent = await _parent(alice)
    fork = await sync_to_async(fork_create)(
        parent=parent, event_id=await _event_id(parent.pk, 2), actor=alice
    )
    assert not await Run.objects.filter(session_id=fork.pk).aexists()


async def test_a_replay_with_nothing_changed_reproduces_the_final_answer(
    echo_agent: LlmAgent, host: Any, alice: User
) -> None:
    parent = await _parent(alice)
    original = await _texts(parent.pk)
    assert original[-1] == ("replay_echo", "The user lives in Paris. You said: thanks")
    # Fork at the first answer (event 2): "where do I live?" and "thanks" followed it.
    fork = await sync_to_async(fork_create)(
        parent=parent, event_id=await _event_id(parent.pk, 2), actor=alice
    )
    replay = await sync_to_async(replay_start)(session=fork, actor=alice)
    assert replay.messages == [
        says(t).model_dump(mode="json", exclude_none=True) for t in MESSAGES[1:]
    ]
    assert len(replay.run_ids) == 1  # one at a time: the next once this one has ended
    runs = await _replayed(replay, 2)
    assert all(run.status == Run.Status.SUCCEEDED for run in runs)
    assert runs[0].finished_at is not None and runs[1].started_at is not None
    assert runs[0].finished_at <= runs[1].started_at  # in order, never at once
    # The same conversation, the same final answer.
    assert await _texts(fork.pk) == original
    assert await AuditEntry.objects.filter(action="replay.start").acount() == 1


async def test_a_replay_with_a_state_edit_that_matters_answers_differently(
    echo_agent: LlmAgent, host: Any, alice: User, operator_user: User
) -> None:
    parent = await _parent(alice)
    fork = await sync_to_async(fork_create)(
        parent=parent,
        event_id=await _event_id(parent.pk, 2),
        actor=operator_user,
        state={"city": "Lima"},
    )
    replay = await sync_to_async(replay_start)(session=fork, actor=operator_user)
    await _replayed(replay, 2)
    texts = await _texts(fork.pk)
    assert texts[2][0] == "operator"  # the edit, after the copied events
    assert texts[-1] == ("replay_echo", "The user lives in Lima. You said: thanks")
    assert texts[-1] != (await _texts(parent.pk))[-1]


async def test_a_replay_stops_at_a_run_that_fails(
    register: Callable[..., None], host: Any, alice: User
) -> None:
    llm = ScriptedLlm(responses=["one", "two", "three"])
    register(LlmAgent(name="replay_flaky", model=llm))
    session = await sync_to_async(session_create)(
        app_name="replay_flaky", user_id=str(alice.pk), owner=alice
    )
    for text in MESSAGES:
        run = await arun_enqueue(
            session=session, agent_name="replay_flaky", message=says(text), requested_by=alice
        )
        await run_ended(run.pk)
    fork = await sync_to_async(fork_create)(
        parent=session, event_id=await _event_id(session.pk, 2), actor=alice
    )
    # The script is spent: the replay's first run fails, and the replay stops there.
    replay = await sync_to_async(replay_start)(session=fork, actor=alice)

    async def stopped() -> Replay | None:
        found = await Replay.objects.aget(pk=replay.pk)
        return found if found.status == Replay.Status.STOPPED else None

    found = await wait_for(stopped, what="the replay to stop")
    assert len(found.run_ids) == 1 and "failed" in found.error
    assert await Run.objects.filter(session_id=fork.pk).acount() == 1


def test_a_fork_carries_the_parents_switches_with_the_overrides(
    echo_agent: LlmAgent, alice: User, operator_user: User, recorder: Any
) -> None:
    # (recorder: forks at a question queue its answer; nothing here may start an executor)
    parent = session_create(app_name=AGENT, user_id=str(alice.pk), owner=alice)
    callback_setting_set(
        agent_name=AGENT,
        callback_name="log_calls",
        enabled=False,
        session_id=parent.pk,
        actor=operator_user,
    )
    store_event(parent.pk, "hi")
    event_id = SessionEvent.objects.get(session=parent, seq=1).event_id
    plain = fork_create(parent=parent, event_id=event_id, actor=alice)
    assert CallbackSetting.objects.get(session=plain).enabled is False

    switched = fork_create(
        parent=parent,
        event_id=event_id,
        actor=operator_user,
        switches=[
            {"agent": AGENT, "name": "log_calls", "enabled": True},
            {"agent": AGENT, "name": CONTENT_CAPTURE, "enabled": False},
        ],
    )
    found = dict(
        CallbackSetting.objects.filter(session=switched).values_list("callback_name", "enabled")
    )
    assert found["log_calls"] is True
    assert len(found) == 2
    # The parent's own switch is unchanged.
    assert CallbackSetting.objects.get(session=parent).enabled is False

    with pytest.raises(PermissionDenied):  # a plain user may not switch callbacks
        fork_create(
            parent=parent,
            event_id=event_id,
            actor=alice,
            switches=[{"agent": AGENT, "name": "log_calls", "enabled": True}],
        )
    for bad, says_ in (
        ([{"agent": AGENT, "name": "nope", "enabled": True}], "not a callback"),
        ({"log_calls": True}, "JSON list"),
        ([{"agent": AGENT, "name": "log_calls", "enabled": "yes"}], "true or false"),
    ):
        with pytest.raises(ValidationError, match=says_):
            fork_create(parent=parent, event_id=event_id, actor=operator_user, switches=bad)
    assert AgentSession.objects.filter(parent=parent).count() == 2


def test_only_forks_with_something_to_replay_replay(
    echo_agent: LlmAgent, alice: User, bob: User, recorder: Any
) -> None:
    parent = session_create(app_name=AGENT, user_id=str(alice.pk), owner=alice)
    with pytest.raises(ValidationError, match="only a fork"):
        replay_start(session=parent, actor=alice)
    store_event(parent.pk, "hi")
    fork = fork_create(
        parent=parent,
        event_id=SessionEvent.objects.get(session=parent, seq=1).event_id,
        actor=alice,
    )
    with pytest.raises(ValidationError, match="nothing to replay"):
        replay_start(session=fork, actor=alice)
    with pytest.raises(PermissionDenied):
        replay_start(session=fork, actor=bob)
    assert not Replay.objects.exists()
    # Only the fork's answer to the question it was made at: no replay run.
    assert list(Run.objects.values_list("session_id", "message_stored")) == [(fork.pk, True)]


async def test_a_replay_whose_process_died_between_runs_is_resumed_by_the_reaper(
    echo_agent: LlmAgent, host: Any, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The end of a replayed run queues the next message; when the process died before it
    could, the reaper's next pass does, and the replay ends as it would have."""
    from agentdash.runs import replays
    from agentdash.runs.reaper import runs_reap

    parent = await _parent(alice)
    original = await _texts(parent.pk)
    fork = await sync_to_async(fork_create)(
        parent=parent, event_id=await _event_id(parent.pk, 2), actor=alice
    )
    # As a process that dies at a run's end: the end finds no replay to advance.
    looked: list[str] = []  # the sessions asked for their replay: by the start, by the end

    def no_replay(session_id: str) -> None:
        looked.append(session_id)

    monkeypatch.setattr(replays, "_active", no_replay)
    replay = await sync_to_async(replay_start)(session=fork, actor=alice)
    (first,) = replay.run_ids
    assert (await run_ended(first)).status == Run.Status.SUCCEEDED

    # The end looks for the replay after the run's row says it ended: undone before that
    # look, the patch would let the real end advance the replay (seen on a loaded machine).
    async def end_looked() -> bool:
        return len(looked) >= 2

    await wait_for(end_looked, what="the run's end to look for its replay")
    stalled = await Replay.objects.aget(pk=replay.pk)
    assert (stalled.status, stalled.run_ids) == (Replay.Status.ACTIVE, [first])
    monkeypatch.undo()

    report = await sync_to_async(runs_reap)(stale_after_s=60, max_attempts=3)
    assert report.replays_resumed == [replay.pk]
    runs = await _replayed(replay, 2)
    assert runs[0].pk == first and runs[1].status == Run.Status.SUCCEEDED
    assert await _texts(fork.pk) == original
    again = await sync_to_async(runs_reap)(stale_after_s=60, max_attempts=3)
    assert again.replays_resumed == []  # a replay that is done is left alone
