"""Spans stored before their usage had columns get them from their attributes (migration
``0006_usage_filled_and_prices_seeded``), so old sessions have totals too."""

from __future__ import annotations

import pytest

from agentdash.spans.models import Span
from agentdash.spans.totals import session_usage
from tests.agentdash.migrations import migrated_back_to
from tests.agentdash.stored import session_make

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]  # migrates back and forth


def test_old_spans_get_their_usage_columns() -> None:
    session = session_make("s-old")
    with migrated_back_to("spans", "0004_session_start_index") as apps:
        OldSpan = apps.get_model("spans", "Span")
        for n, attributes in enumerate(
            [
                {
                    "gen_ai.request.model": "gemini-2.5-flash",
                    "gen_ai.response.model": "gemini-2.5-flash-001",
                    "gen_ai.usage.input_tokens": 1000,
                    "gen_ai.usage.output_tokens": 100,
                },
                {"gen_ai.request.model": "m", "gen_ai.usage.output_tokens": 7.0},
                {"gen_ai.usage.input_tokens": -4, "gen_ai.usage.output_tokens": "lots"},
                {"gen_ai.tool.name": "lookup"},
                ["not", "an", "object"],
            ],
            start=1,
        ):
            OldSpan.objects.create(
                trace_id=f"{n:032x}",
                span_id=f"{n:016x}",
                name="s",
                start_time=n,
                session_id=session.id,
                attributes=attributes,
            )
    found = {
        row.span_id[-1]: (row.usage_model, row.tokens_in, row.tokens_out)
        for row in Span.objects.all()
    }
    assert found == {
        "1": ("gemini-2.5-flash-001", 1000, 100),
        "2": ("m", None, 7),
        "3": ("", None, None),
        "4": ("", None, None),
        "5": ("", None, None),
    }
    total, _ = session_usage(session_id=session.id)
    # Priced from the seeded table: 1000 × $0.30 + 100 × $2.50 per million; "m" has no price.
    assert total.as_json() == {
        "input": 1000,
        "output": 107,
        "cached": None,
        "thinking": None,
        "calls": 2,
        "priced_calls": 1,
        "cost_usd": 0.00055,
        "unpriced": ["m"],
    }
