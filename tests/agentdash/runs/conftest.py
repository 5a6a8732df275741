"""Fixtures for the runs tests: stored sessions and runs, agents registered for a test, the
run host on the test's loop, a recording executor, and the spans the runtime emitted."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest
from google.genai import types
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentdash.agent_sessions.models import AgentSession
from agentdash.live.pipeline import live_pipeline
from agentdash.registry.loader import agents_cache_clear
from agentdash.runs import executors
from agentdash.runs.host import run_host
from agentdash.runs.models import Run
from runtime import BaseAgent
from tests.agentdash.runs import agents as agents_module

AGENTS_MODULE = agents_module.__name__
FINISHED = (Run.Status.SUCCEEDED, Run.Status.FAILED, Run.Status.CANCELLED)


@pytest.fixture
def make_run(db: None) -> Callable[..., Run]:
    session = AgentSession.objects.create(
        id="s1", app_name="app", user_id="u", last_update_time=time.time()
    )

    def make(status: str = Run.Status.QUEUED, **fields: object) -> Run:
        return Run.objects.create(
            session=session,
            agent_name=fields.pop("agent_name", "a"),
            invocation_id=f"e-{uuid.uuid4().hex[:12]}",
            status=status,
            message=fields.pop("message", {"role": "user", "parts": [{"text": "hi"}]}),
            **fields,
        )

    return make


def says(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


@pytest.fixture
def register(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    """``register(agent, ...)``: these root agents (and the capital demo) are the configured
    ones for this test."""
    paths = ["agentdash.demo.capital:root_agent"]
    settings.AGENTDASH = {**settings.AGENTDASH, "AGENTS": paths}

    def add(*agents: BaseAgent) -> None:
        for agent in agents:
            monkeypatch.setattr(agents_module, agent.name, agent, raising=False)
            paths.append(f"{AGENTS_MODULE}:{agent.name}")
        settings.AGENTDASH = {**settings.AGENTDASH, "AGENTS": list(paths)}
        agents_cache_clear()

    agents_cache_clear()
    yield add
    agents_cache_clear()


@pytest.fixture
def make_session(transactional_db: None) -> Callable[[str], AgentSession]:
    def make(app_name: str) -> AgentSession:
        return AgentSession.objects.create(
            id=uuid.uuid4().hex, app_name=app_name, user_id="u", last_update_time=time.time()
        )

    return make


@pytest.fixture
async def inline(settings: Any, transactional_db: None) -> AsyncIterator[Any]:
    """The inline executor with quick heartbeats, not started: the first enqueue starts it.
    Afterwards its runs are cancelled and the run host (services, live pipeline) stopped."""
    settings.AGENTDASH = {
        **settings.AGENTDASH,
        "EXECUTOR": "inline",
        "RUN_HEARTBEAT_S": 0.05,
        "REAPER_INTERVAL_S": 3600.0,
    }
    executors.executor_reset()
    found = run_host()
    yield found
    executor = executors.executor_get()
    if isinstance(executor, executors.InlineExecutor):
        await executor.astop()
    if found.loop is asyncio.get_running_loop():
        await found.astop()
    executors.executor_reset()
    live_pipeline().uninstall()


@pytest.fixture
async def host(inline: Any) -> Any:
    """The run host and the inline executor, started on the test's loop."""
    await inline.astart(runs=True)
    return inline


async def wait_for(
    check: Callable[[], Awaitable[Any]], *, timeout: float = 60.0, what: str = "it"
) -> Any:
    """Poll ``check`` until it returns something truthy; fail after ``timeout`` (generous:
    it only bounds a wait, it measures nothing)."""
    deadline = time.monotonic() + timeout
    while True:
        found = await check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        await asyncio.sleep(0.02)


async def run_ended(run_id: int) -> Run:
    async def ended() -> Run | None:
        run = await Run.objects.aget(pk=run_id)
        return run if run.status in FINISHED else None

    found: Run = await wait_for(ended, what=f"run {run_id} to end")
    return found


@pytest.fixture(scope="session")
def _exporter() -> InMemorySpanExporter:
    exporter = InMemorySpanExporter()
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        trace.set_tracer_provider(TracerProvider())
        provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter


@pytest.fixture
def spans(_exporter: InMemorySpanExporter) -> Iterator[InMemorySpanExporter]:
    """Every span that ended during the test."""
    _exporter.clear()
    yield _exporter
    _exporter.clear()
