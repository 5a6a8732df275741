"""The golden answers of the session page's data endpoints (``golden/http.*.json``,
docs/PROTOCOL.md "Pages over HTTP"), each equal to what the real view answers for fixture
data (``"<int>"``, ``"<str>"``, ``"<float>"`` stand for any value of that type)."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from google.genai import types

from agentdash.agent_sessions._state_store import event_append
from agentdash.agent_sessions.event_data import event_serialize
from agentdash.agent_sessions.models import AgentSession
from agentdash.runs.models import Run
from agentdash.spans.prices import model_price_set
from agentdash.spans.services import spans_store
from agentdash.spans.span_version import SpanVersion
from runtime.events.event import Event
from tests.agentdash.live.test_golden import matches

pytestmark = pytest.mark.django_db

GOLDEN = Path(__file__).parent / "golden"
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
ROOT = "53995c3f42cd8ad8"
TOOL = "00f067aa0ba902b7"


def fixture_session(owner: User) -> AgentSession:
    # The price the goldens' costs are computed at (the seeded one, set again: a test's
    # figures do not depend on what the migrations seed).
    model_price_set(
        model="gemini-2.5-flash",
        input_per_mtok=Decimal("0.30"),
        output_per_mtok=Decimal("2.50"),
        cached_input_per_mtok=Decimal("0.03"),
        as_of=date(2026, 11, 24),
        source="https://ai.google.dev/gemini-api/docs/pricing",
        actor=None,
    )
    session = AgentSession.objects.create(
        id="s-golden", app_name="capital_agent", user_id="u", owner=owner, last_update_time=1.0
    )
    question = Event(
        invocation_id="e-inv-1",
        author="user",
        content=types.Content(
            role="user", parts=[types.Part(text="What is the capital of *France*?")]
        ),
    )
    event_append(session_id=session.id, event_data=event_serialize(question))
    run = Run.objects.create(
        session=session,
        agent_name="capital_agent",
        invocation_id="e-inv-1",
        message={},
        status=Run.Status.SUCCEEDED,
        attempt=1,
        trace_id=TRACE,
    )
    start = 1_700_000_000_000_000_000
    spans_store(
        versions=[
            SpanVersion(
                trace_id=TRACE,
                span_id=ROOT,
                name="generate_content gemini-2.5-flash",
                start_time=start,
                end_time=start + 250_000_000,
                status="ok",
                session_id=session.id,
                run_id=run.pk,
                attributes={
                    "agentdash.span.kind": "model",
                    "gen_ai.request.model": "gemini-2.5-flash",
                    "gen_ai.usage.input_tokens": 50,
                    "gen_ai.usage.output_tokens": 3,
                    "gen_ai.usage.cache_read.input_tokens": 20,
                },
            ),
            SpanVersion(
                trace_id=TRACE,
                span_id=TOOL,
                parent_span_id=ROOT,
                name="execute_tool get_capital",
                start_time=start + 100_000_000,
                session_id=session.id,
                run_id=run.pk,
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "get_capital",
                    "gen_ai.tool.call.arguments": '{"country": "France"}',
                },
            ),
        ]
    )
    return session


ANSWERS: dict[str, tuple[str, dict[str, str], dict[str, str]]] = {
    "http.snapshot": ("dashboard:session_snapshot", {}, {}),
    "http.spans": ("dashboard:session_spans", {}, {}),
    "http.span": ("dashboard:session_span", {"trace_id": TRACE, "span_id": TOOL}, {}),
    "http.span_model": ("dashboard:session_span", {"trace_id": TRACE, "span_id": ROOT}, {}),
    "http.span_search": ("dashboard:session_span_search", {}, {"q": "FRANCE"}),
    "http.events": ("dashboard:session_events", {}, {}),
}


def test_every_endpoint_has_a_golden_answer() -> None:
    assert {p.stem for p in GOLDEN.glob("http.*.json")} == set(ANSWERS)


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_the_golden_answer_is_what_the_view_answers(
    name: str, client: Client, operator_user: User
) -> None:
    session = fixture_session(operator_user)
    route, kwargs, query = ANSWERS[name]
    client.force_login(operator_user)
    response = client.get(reverse(route, kwargs={"session_id": session.id, **kwargs}), query)
    assert response.status_code == 200
    golden: Any = json.loads((GOLDEN / f"{name}.json").read_text())
    matches(golden, response.json())
