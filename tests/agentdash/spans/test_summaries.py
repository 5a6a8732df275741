"""A session's span summaries (agentdash.spans.summaries): the guardrail decision a row shows,
read from the column the store fills, after every other field."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agentdash.agent_sessions.models import AgentSession
from agentdash.spans.services import spans_store
from agentdash.spans.span_version import SpanVersion
from agentdash.spans.summaries import SUMMARY_FIELDS, span_summaries

pytestmark = pytest.mark.django_db

TRACE = "0af7651916cd43dd8448eb211c80319c"
MakeSession = Callable[[str], AgentSession]


def stored(span_id: str, start: int, **attributes: Any) -> SpanVersion:
    return SpanVersion(
        trace_id=TRACE,
        span_id=span_id,
        name="callback before_model",
        start_time=start,
        end_time=start + 5,
        session_id="s1",
        attributes={"agentdash.span.kind": "callback", **attributes},
    )


def rows_of(page_rows: list[list[Any]]) -> list[dict[str, Any]]:
    return [dict(zip(SUMMARY_FIELDS, row, strict=True)) for row in page_rows]


def test_the_decision_is_the_last_field_after_the_usage_and_extracted_ones() -> None:
    assert SUMMARY_FIELDS[-1] == "decision"
    assert SUMMARY_FIELDS[-4:-1] == ("tokens_cached", "tokens_thinking", "cost_usd")


def test_a_summary_carries_the_guardrail_decision_or_nothing(make_session: MakeSession) -> None:
    make_session("s1")
    spans_store(
        versions=[
            stored(
                "a" * 16,
                10,
                **{
                    "agentdash.callback.name": "pii_screen",
                    "agentdash.callback.hook": "before_model",
                    "agentdash.callback.outcome": "overridden",
                    "agentdash.guardrail.name": "pii_screen",
                    "agentdash.guardrail.decision": "blocked",
                    "agentdash.guardrail.reason": "a card number",
                    "agentdash.guardrail.policy": "pii@3",
                },
            ),
            stored("b" * 16, 20, **{"agentdash.callback.name": "log_request"}),
            stored("c" * 16, 30, **{"agentdash.guardrail.decision": "maybe"}),
            stored("d" * 16, 40, **{"agentdash.guardrail.decision": "redacted"}),
        ]
    )
    blocked, plain, unknown, redacted = rows_of(span_summaries(session_id="s1").rows)
    assert (blocked["decision"], plain["decision"]) == ("blocked", "")
    assert (unknown["decision"], redacted["decision"]) == ("", "redacted")
    # The fields before it are where they were.
    assert (blocked["label"], blocked["hook"], blocked["outcome"]) == (
        "pii_screen",
        "before_model",
        "overridden",
    )
    assert blocked["tokens_in"] is None and blocked["cancelled"] is False


def test_pages_still_follow_on_with_the_decision_column(make_session: MakeSession) -> None:
    make_session("s1")
    spans_store(
        versions=[
            stored(f"{i + 1:016x}", 100 + i, **{"agentdash.guardrail.decision": "limit"})
            for i in range(5)
        ]
    )
    first = span_summaries(session_id="s1", limit=3)
    assert first.next is not None
    second = span_summaries(session_id="s1", after=first.next, limit=3)
    assert second.next is None
    seen = rows_of(first.rows) + rows_of(second.rows)
    assert [r["span_id"] for r in seen] == [f"{i + 1:016x}" for i in range(5)]
    assert {r["decision"] for r in seen} == {"limit"}
