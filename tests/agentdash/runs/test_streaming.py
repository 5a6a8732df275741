"""The runs app streams through whatever stream is registered (the live app registers its
pipeline) and never imports the live app: with no stream, or a broken one, runs go on."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from agentdash.agent_sessions.models import AgentSession
from agentdash.live.run_stream import PipelineRunStream
from agentdash.runs import streaming
from agentdash.runs.host import RunHost
from agentdash.runs.models import Run
from agentdash.runs.services import run_enqueue
from agentdash.runs.worker import run_execute
from runtime import LlmAgent, ScriptedLlm
from tests.agentdash.recording_executor import RecordingExecutor
from tests.agentdash.runs.conftest import says

MakeSession = Callable[[str], AgentSession]


class RecordingStream:
    """A stream that notes every call, in order (``fail``: each call raises instead)."""

    def __init__(self, *, fail: bool = False) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.fail = fail

    def _note(self, name: str, value: Any = None) -> None:
        self.calls.append((name, value))
        if self.fail:
            raise RuntimeError(f"the stream is down ({name})")

    def start(self) -> None:
        self._note("start")

    async def stop(self) -> None:
        self._note("stop")

    async def publish_partial(self, **message: Any) -> None:
        self._note("partial", message["text"])

    async def backpressure(self) -> None:
        self._note("backpressure")

    async def settle(self, invocation_id: str) -> None:
        self._note("settle", invocation_id)

    def run_started(self, *, session_id: str, invocation_id: str, run_id: int) -> None:
        self._note("started", session_id)

    def run_ended(self, *, session_id: str) -> None:
        self._note("ended", session_id)


@pytest.fixture
def use_stream() -> Iterator[Callable[[Any], None]]:
    registered = streaming.run_stream()
    yield streaming.run_stream_register
    streaming.run_stream_register(registered)


def test_the_live_app_registers_its_pipeline() -> None:
    assert isinstance(streaming.run_stream(), PipelineRunStream)


async def execute(session: AgentSession, agent: str) -> Run:
    queue = sync_to_async(run_enqueue)
    run: Run = await queue(session=session, agent_name=agent, message=says("hi"), requested_by=None)
    await run_execute(run.pk, worker="w1")
    return await Run.objects.aget(pk=run.pk)


@pytest.mark.django_db(transaction=True)
async def test_a_run_streams_its_text_waits_between_events_and_settles_before_its_outcome(
    register: Callable[..., None],
    make_session: MakeSession,
    recorder: RecordingExecutor,
    use_stream: Callable[[Any], None],
) -> None:
    stream = RecordingStream()
    use_stream(stream)
    register(LlmAgent(name="talker", model=ScriptedLlm(responses=["Hello there friend."])))
    session = await sync_to_async(make_session)("talker")
    run = await execute(session, "talker")
    assert run.status == Run.Status.SUCCEEDED
    names = [name for name, _ in stream.calls]
    assert "".join(text for name, text in stream.calls if name == "partial") == (
        "Hello there friend."
    )
    assert names.count("backpressure") >= 2  # after every event the runner yields
    assert stream.calls[0] == ("started", session.id)
    # Its spans stored before its outcome is recorded; then what waits goes out at once.
    assert stream.calls[-2:] == [("settle", run.invocation_id), ("ended", session.id)]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("stream", [None, RecordingStream(fail=True)], ids=["none", "broken"])
async def test_without_a_working_stream_runs_go_on(
    register: Callable[..., None],
    make_session: MakeSession,
    recorder: RecordingExecutor,
    use_stream: Callable[[Any], None],
    stream: RecordingStream | None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    use_stream(stream)
    register(LlmAgent(name="talker", model=ScriptedLlm(responses=["Hello there."])))
    session = await sync_to_async(make_session)("talker")
    with caplog.at_level(logging.ERROR, logger="agentdash.runs.streaming"):
        run = await execute(session, "talker")
    assert (run.status, run.error) == (Run.Status.SUCCEEDED, "")
    if stream is not None:
        names = {name for name, _ in stream.calls}
        assert names == {"started", "partial", "backpressure", "settle", "ended"}
        assert "waiting for the spans of" in caplog.text
        assert "hurrying the live stream failed" in caplog.text
        assert "publishing a partial failed" in caplog.text


async def test_the_host_runs_the_registered_services_and_stops_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    host = RunHost()
    started: list[str] = []
    stopped: list[str] = []

    async def service(name: str) -> None:
        started.append(name)
        try:
            await asyncio.Event().wait()
        finally:
            stopped.append(name)

    async def nothing() -> None:
        return None

    monkeypatch.setattr(streaming, "start", lambda: None)  # no pipeline, no database here
    monkeypatch.setattr(streaming, "stop", nothing)
    monkeypatch.setattr(host.switchboard, "arefresh", nothing)
    host.service_register("one", lambda h: service(f"one, given its host: {h is host}"))
    host.service_register("two", lambda h: service("replaced"))
    host.service_register("two", lambda h: service("two"))
    await host.astart(runs=False)
    await asyncio.sleep(0)
    assert started == []  # without runs only the stream starts
    await host.astart(runs=True)
    await host.astart(runs=True)  # again: nothing starts twice
    await asyncio.sleep(0)
    assert sorted(started) == ["one, given its host: True", "two"]
    await host.astop()
    assert sorted(stopped) == sorted(started)


async def test_a_starter_cancelled_while_the_host_starts_leaves_it_starting_for_the_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two starters (two first requests): the first is cancelled (its socket closed) while the
    callback switches load; the second still gets a started host, not the first's
    cancellation, and a failed start is tried again by the next starter."""
    host = RunHost()
    loading, gate = asyncio.Event(), asyncio.Event()
    failures = {"left": 0}

    async def slow_refresh() -> None:
        loading.set()
        await gate.wait()

    async def nothing() -> None:
        return None

    monkeypatch.setattr(streaming, "start", lambda: None)
    monkeypatch.setattr(streaming, "stop", nothing)
    monkeypatch.setattr(host.switchboard, "arefresh", slow_refresh)
    monkeypatch.setattr(host, "_start_part", _failing_part(host._start_part, failures))
    first = asyncio.create_task(host.astart())
    await asyncio.wait_for(loading.wait(), 10)
    second = asyncio.create_task(host.astart())
    for _ in range(10):
        await asyncio.sleep(0)  # the second waits on the runs' start
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    assert not second.done()
    gate.set()
    await asyncio.wait_for(second, 10)  # started, not cancelled
    assert host.runs_agents
    await host.astop()

    failures["left"] = 1  # a start that fails: its starters see why, the next one retries
    with pytest.raises(RuntimeError, match="went away"):
        await asyncio.wait_for(host.astart(), 10)
    assert not host.runs_agents
    await asyncio.wait_for(host.astart(), 10)
    assert host.runs_agents
    await host.astop()


def _failing_part(start_part: Any, failures: dict[str, int]) -> Any:
    """``start_part``, then a failure of the runs' part while ``failures`` has some left (a
    failed refresh of the switches is logged and gone past: this fails the part itself)."""

    async def part(name: str) -> None:
        await start_part(name)
        if name == "runs" and failures["left"]:
            failures["left"] -= 1
            raise RuntimeError("the database went away")

    return part


def test_the_apps_register_the_control_listener_the_reaper_the_health_record_and_alerts() -> None:
    from agentdash.runs.host import run_host

    registered = run_host()._registered
    assert set(registered) == {
        "agentdash.control-listener",
        "agentdash.reaper",
        "agentdash.health",
        "agentdash.alerts",
    }
    # Only where runs execute does the listener run; every host reaps and records its health.
    assert {name for name, s in registered.items() if s.runs_only} == {"agentdash.control-listener"}
