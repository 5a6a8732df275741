"""The sessions list's tokens and cost: each row's is the session's total (as its page's
header has it), read for the whole page in one query, written as the session page writes
it."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from agentdash.agent_sessions.models import AgentSession
from agentdash.dashboard.sessions_list.reads import SessionListFilters, session_list_page
from agentdash.dashboard.sessions_list.usage_text import cost_text, tokens_text
from agentdash.spans.models import ModelPrice
from agentdash.spans.prices import model_price_set
from agentdash.spans.services import spans_store
from agentdash.spans.span_version import SpanVersion
from agentdash.spans.totals import session_usage

pytestmark = pytest.mark.django_db


def session_with_calls(owner: User, session_id: str, calls: list[tuple[str, int, int]]) -> None:
    AgentSession.objects.create(
        id=session_id, app_name="capital_agent", user_id=str(owner.pk), owner=owner,
        last_update_time=1_000.0 + len(calls),
    )  # fmt: skip
    spans_store(
        versions=[
            SpanVersion(
                trace_id=session_id.ljust(32, "0")[:32],
                span_id=f"{n:016x}",
                name="generate_content",
                start_time=n,
                end_time=n + 1,
                session_id=session_id,
                attributes={
                    "gen_ai.request.model": model,
                    "gen_ai.usage.input_tokens": tokens_in,
                    "gen_ai.usage.output_tokens": tokens_out,
                },
            )
            for n, (model, tokens_in, tokens_out) in enumerate(calls, start=1)
        ]
    )


@pytest.fixture
def priced() -> None:
    ModelPrice.objects.all().delete()
    model_price_set(
        model="gemini-2.5-flash",
        input_per_mtok=Decimal("0.30"),
        output_per_mtok=Decimal("2.50"),
        as_of=date(2026, 11, 24),
        source="test",
        actor=None,
    )


def test_each_row_has_its_sessions_total_from_one_query(alice: User, priced: None) -> None:
    session_with_calls(alice, "s-priced", [("gemini-2.5-flash", 1000, 100)] * 3)
    session_with_calls(alice, "s-mixed", [("gemini-2.5-flash", 2000, 10), ("my-own", 50, 5)])
    session_with_calls(alice, "s-unknown", [("my-own", 7, 1)])
    session_with_calls(alice, "s-none", [])
    with CaptureQueriesContext(connection) as queries:
        page = session_list_page(user=alice, filters=SessionListFilters())
    rows = {row["id"]: row for row in page.rows}
    assert set(rows) == {"s-priced", "s-mixed", "s-unknown", "s-none"}
    for session_id, row in rows.items():
        assert row["usage"] == session_usage(session_id=session_id)[0].as_json()
    assert sum("spans_span" in q["sql"] and "SUM(" in q["sql"] for q in queries) == 1
    shown = {sid: (row["usage_tokens"], row["usage_cost"]) for sid, row in rows.items()}
    assert shown == {
        "s-priced": ("3,000 → 300", "$0.001650"),
        "s-mixed": ("2,050 → 15", "≥ $0.0006250"),  # my-own has no price
        "s-unknown": ("7 → 1", "—"),
        "s-none": ("—", "$0"),
    }


@pytest.mark.parametrize(
    ("usd", "text"),
    [  # as dashboard/js/common/format.js formatCost writes them (Intl, 4–6 significant digits)
        (None, "—"),
        (0, "$0"),
        (1.71e-05, "$0.00001710"),
        (0.00046, "$0.0004600"),
        (0.129, "$0.1290"),
        (0.190668, "$0.190668"),
        (1, "$1.000"),
        (4.0295219, "$4.02952"),
        (9.9999999, "$10.00"),
        (12345.678, "$12,345.7"),
        (1234567.0, "$1,234,570"),
        (float("nan"), "—"),
    ],
)
def test_cost_text(usd: float | None, text: str) -> None:
    assert cost_text({"cost_usd": usd, "unpriced": []}) == text


def test_tokens_text() -> None:
    assert tokens_text({"calls": 2, "input": 1234567, "output": 89}) == "1,234,567 → 89"
    assert tokens_text({"calls": 0, "input": 0, "output": 0}) == "—"


def test_the_list_page_shows_the_column(client: Client, alice: User, priced: None) -> None:
    session_with_calls(alice, "s-shown", [("gemini-2.5-flash", 1000, 100), ("<b>x</b>", 1, 1)])
    client.force_login(alice)
    page = client.get(reverse("dashboard:home")).content.decode()
    assert "Tokens · cost" in page
    cell: dict[str, Any] = {"tokens": "1,001 → 101", "cost": "≥ $0.0005500"}
    assert f'<span class="usage-tokens">{cell["tokens"]}</span>' in page
    assert f'<span class="usage-cost">{cell["cost"]}</span>' in page
    assert 'title="No price for: &lt;b&gt;x&lt;/b&gt; (not in the cost)"' in page  # as text
