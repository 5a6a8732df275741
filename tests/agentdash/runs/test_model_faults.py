"""A run against the real google-genai client and a local Gemini-compatible server that
answers 429 and 503: retried to success, or failed with a clear message in the chat."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.runs.models import Run
from agentdash.runs.services import arun_enqueue
from runtime import Gemini, LlmAgent
from runtime.testing.gemini_server import FakeGeminiServer
from tests.agentdash.runs.conftest import run_ended, says

pytestmark = pytest.mark.django_db(transaction=True)

ATTEMPTS = 3


@pytest.fixture
def server() -> Iterator[FakeGeminiServer]:
    with FakeGeminiServer() as found:
        yield found


@pytest.fixture
async def gemini_session(
    server: FakeGeminiServer,
    register: Callable[..., None],
    make_session: Callable[[str], AgentSession],
    host: Any,
) -> AsyncIterator[AgentSession]:
    model = Gemini(
        model="gemini-2.5-flash",
        base_url=server.base_url,
        api_key="test",
        initial_backoff_s=0.01,
        max_backoff_s=0.05,
        max_attempts=ATTEMPTS,
    )
    register(LlmAgent(name="gemini_agent", model=model, instruction="Be brief."))
    session: AgentSession = await sync_to_async(make_session)("gemini_agent")
    yield session
    await model.aclose()


async def ask(session: AgentSession) -> Run:
    run = await arun_enqueue(
        session=session, agent_name="gemini_agent", message=says("Hello?"), requested_by=None
    )
    return await run_ended(run.pk)


async def last_event(session: AgentSession) -> dict[str, Any]:
    row = await SessionEvent.objects.filter(session=session).order_by("-seq").afirst()
    assert row is not None
    return row.data


async def test_429_then_503_then_an_answer(
    server: FakeGeminiServer, gemini_session: AgentSession
) -> None:
    server.fail(status=429, retry_after=0)
    server.fail(status=503)
    server.script("Hello from the fake Gemini.")

    run = await ask(gemini_session)

    assert (run.status, run.error) == (Run.Status.SUCCEEDED, "")
    assert len(server.requests) == 3
    event = await last_event(gemini_session)
    assert event["author"] == "gemini_agent"
    assert event["content"]["parts"][0]["text"] == "Hello from the fake Gemini."


async def test_503_on_every_attempt_fails_the_run_with_a_clear_message(
    server: FakeGeminiServer, gemini_session: AgentSession
) -> None:
    server.fail(status=503, times=ATTEMPTS)

    run = await ask(gemini_session)

    assert run.status == Run.Status.FAILED
    assert run.error.startswith("ModelCallError: ") and "503" in run.error
    assert len(server.requests) == ATTEMPTS and server.pending == 0
    assert len(run.trace_id) == 32
    event = await last_event(gemini_session)
    assert (event["author"], event["error_code"]) == ("gemini_agent", "MODEL_ERROR")
    assert event["error_message"] == f"The run failed: {run.error}"
