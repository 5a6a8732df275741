"""A session's span summaries (agentdash.spans.summaries): the guardrail decision a row shows,
read from the column the store fills, after every other field."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agentdash.agent_sessions.models import AgentSession
from agentdash.spans.services import spans_store
from agentdash.spans.span_version import SpanVersion
from agentdash.spans.summaries import SUMMARY_FIELDS, BadCursor, span_page_plan, span_summaries

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


def test_a_plan_splits_the_rest_into_pages_read_at_once_each_span_once(
    make_session: MakeSession,
) -> None:
    """The page after the first brings where each later page begins; pages bounded by two
    cursors hold every span once — also a span stored after the plan was made, inside one
    of its pages (a page bounded by a count would have pushed its last span off both)."""
    make_session("s1")
    spans_store(versions=[stored(f"{i + 1:016x}", 100 + 10 * i) for i in range(23)])
    first = span_summaries(session_id="s1", limit=3)
    assert first.next is not None
    plan = span_page_plan(session_id="s1", after=first.next, size=5)
    assert plan[0] == first.next and len(plan) == 5  # 20 spans after the first 3: 4 pages
    spans_store(versions=[stored("00000000000000ff", 145)])  # lands in the second page
    seen = rows_of(first.rows)
    for from_, until in zip(plan, [*plan[1:], None], strict=True):
        page = span_summaries(session_id="s1", after=from_, until=until, limit=100)
        assert page.next is None
        seen += rows_of(page.rows)
    ids = [r["span_id"] for r in seen]
    assert len(ids) == len(set(ids)) == 24
    assert "00000000000000ff" in ids
    with pytest.raises(BadCursor):
        span_summaries(session_id="s1", until="not a cursor")


def test_the_spans_views_answer_a_plan_and_its_pages(client: Any, alice: Any) -> None:
    from agentdash.agent_sessions.services import session_create

    session = session_create(app_name="app", user_id="u", owner=alice)
    spans_store(
        versions=[
            SpanVersion(
                trace_id=TRACE, span_id=f"{i + 1:016x}", name="s", start_time=10 + i,
                end_time=20 + i, session_id=session.pk,
            )
            for i in range(12)
        ]
    )  # fmt: skip
    client.force_login(alice)
    base = f"/sessions/{session.pk}/spans/"
    answer = client.get(f"{base}?limit=2", HTTP_ACCEPT_ENCODING="gzip")
    assert answer.status_code == 200 and answer["Content-Encoding"] == "gzip"
    body = client.get(f"{base}?limit=2").json()
    plan = client.get(f"{base}plan/", {"after": body["next"], "size": 4}).json()["plan"]
    assert len(body["rows"]) == 2 and plan[0] == body["next"] and len(plan) == 3
    last = client.get(base, {"after": plan[1], "until": plan[2], "limit": 100}).json()
    assert len(last["rows"]) == 4 and last["next"] is None
    assert client.get(f"{base}?until=x").json()["error"]["field"] == "until"
    assert client.get(f"{base}plan/?size=4").json()["error"]["field"] == "after"
    assert client.get(f"{base}plan/?after=x").json()["error"]["field"] == "after"
