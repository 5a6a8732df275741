"""Every bar and point of the Monitor's charts leads to exactly the sessions behind it: the
sessions list narrowed to a bucket's window and what the chart counts (runs of an outcome,
model or tool calls, failed ones, a guardrail's decision, a wait's answer), the links of its
rows opening the timeline's find bar on those steps."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agentdash.runs.models import Wait
from agentdash.scores.models import Score, ScoreDefinition
from agentdash.scores.services import ScoreGiven, score_record
from tests.agentdash.hostile import JUNK_VALUES, NUL, Prober, assert_refused_naming
from tests.agentdash.monitor.generated import RANGE, T0, listed, remote_pause, step

pytestmark = [pytest.mark.django_db, pytest.mark.database]  # JSON lookups: PostgreSQL too

ALL = {"s-alice", "s-bob", "otlp-" + "a" * 40}


def test_a_bar_drills_down_to_exactly_its_sessions(generated: Any, operator_user: User) -> None:
    """The runs chart's bars lead to the sessions list narrowed to their bucket's window (and
    outcome): the failed run at 09:25 is alice's; bob's failed at 10:10."""
    window = {"runs_from": "2026-11-20T09:25:00.000Z", "runs_to": "2026-11-20T09:30:00.000Z"}
    assert listed(operator_user, **window, outcome="failed") == {"s-alice"}
    assert listed(operator_user, **window, outcome="succeeded") == set()
    whole = {"runs_from": RANGE["from"], "runs_to": RANGE["to"]}
    assert listed(operator_user, **whole) == {"s-alice", "s-bob", "otlp-" + "a" * 40}
    assert listed(operator_user, **whole, outcome="failed") == {"s-alice", "s-bob"}
    # A window that cannot be is said, and left out.
    assert len(listed(operator_user, runs_from="soon", runs_to="later")) == 3


def window(start_minute: int, end_minute: int) -> dict[str, str]:
    return {
        "steps_from": (T0 + timedelta(minutes=start_minute)).isoformat(),
        "steps_to": (T0 + timedelta(minutes=end_minute)).isoformat(),
    }


def test_a_bucket_of_calls_drills_down_to_the_sessions_that_made_them(
    generated: Any, operator_user: User
) -> None:
    """alice's model calls at 09:06, 09:16, 09:26 and tool calls at 09:07 (ok) and 09:27
    (failed); bob's tool call at 10:11."""
    assert listed(operator_user, **window(5, 10), step="model") == {"s-alice"}
    assert listed(operator_user, **window(5, 10), step="tool") == {"s-alice"}
    assert listed(operator_user, **window(5, 10), step="tool_error") == set()
    assert listed(operator_user, **window(25, 30), step="tool_error") == {"s-alice"}
    assert listed(operator_user, **window(30, 60), step="model") == set()
    assert listed(operator_user, **window(0, 120), step="tool") == {"s-alice", "s-bob"}
    named = {"step": "tool", "step_name": "lookup_order"}
    assert listed(operator_user, **window(0, 120), **named) == {"s-bob"}
    model = {"step": "model", "step_name": "gemini-x"}
    assert listed(operator_user, **window(0, 120), **model) == {"s-alice"}
    assert listed(operator_user, **window(0, 120), step="model", step_name="other") == set()
    # What the chart was narrowed to narrows the list too; a person sees only their own.
    assert listed(operator_user, **window(0, 120), step="tool", owner="bob") == {"s-bob"}
    assert listed(generated["mine"].owner, **window(0, 120), step="tool") == {"s-alice"}


def test_decisions_and_waits_drill_down_to_their_sessions(
    generated: Any, operator_user: User
) -> None:
    mine, theirs = generated["mine"], generated["theirs"]
    decided = {"agentdash.guardrail.name": "refunds", "agentdash.guardrail.decision": "blocked"}
    step(theirs, 70, "callback", 72, 0.01, **decided)
    assert listed(operator_user, **window(70, 75), step="decision", step_name="blocked") == {
        "s-bob"
    }
    assert listed(operator_user, **window(70, 75), step="decision", step_name="redacted") == set()
    Wait.objects.create(
        session=mine, run=mine.runs.first(), request_id="adk-1", kind="confirmation",
        tool="transfer", asked_at=T0 + timedelta(minutes=8), outcome="deny",
        answered_at=T0 + timedelta(minutes=9),
    )  # fmt: skip
    assert listed(operator_user, **window(5, 10), step="wait", step_name="deny") == {"s-alice"}
    assert listed(operator_user, **window(5, 10), step="wait", step_name="approve") == set()
    assert listed(operator_user, **window(5, 10), step="wait") == {"s-alice"}  # any answer
    assert listed(operator_user, **window(10, 15), step="wait") == set()
    # A remote app's pause, by its answer.
    remote = remote_pause(mine.owner, minute=41, decision="approve", waited_s=12)
    client = Client()
    client.force_login(operator_user)
    for name, shown in (("approve", True), ("deny", False), ("", True), ("waiting", False)):
        page = client.get("/", {**window(40, 45), "step": "wait", "step_name": name})
        assert (f'data-session-id="{remote}"' in page.content.decode()) is shown, name


def test_the_rows_open_their_timeline_on_the_steps_and_bad_filters_are_said(
    generated: Any, operator_user: User
) -> None:
    client = Client()
    client.force_login(operator_user)
    found = client.get("/", {**window(25, 30), "step": "tool_error", "step_name": "get_capital"})
    html = found.content.decode()
    find = {
        "find_kind": "tool", "find_from": "2026-11-20T09:25:00+00:00",
        "find_to": "2026-11-20T09:30:00+00:00", "find_status": "error", "find_text": "get_capital",
    }  # fmt: skip
    assert f"/sessions/s-alice/?{urlencode(find)}".replace("&", "&amp;") in html
    assert "with a tool call that failed (get_capital) from" in html
    # What cannot be is said and left out: the list is not narrowed by it.
    bad = client.get("/", {**window(25, 30), "step": "everything"})
    assert "step: Select a valid choice" in bad.content.decode()
    assert listed(operator_user, **window(25, 30), step="everything") == ALL
    nul = client.get("/", {**window(0, 120), "step": "tool", "step_name": "get\x00capital"})
    assert nul.status_code == 400 and b"contains a NUL character" in nul.content
    assert listed(operator_user, steps_from="soon", steps_to="later", step="tool") == ALL


@pytest.mark.parametrize("name", ["steps_from", "steps_to", "step", "step_name"])
def test_hostile_drill_down_parameters_are_refused_or_said_never_a_500(
    generated: Any, operator_user: User, name: str
) -> None:
    prober = Prober(Client())
    prober.client.force_login(operator_user)
    base = {**window(0, 120), "step": "tool", "step_name": "get_capital"}
    for junk in (*JUNK_VALUES, "x" * 100_000, "2026-11-20T09:00:00+00:00" * 3):
        response = prober.get("/", list({**base, name: junk}.items()))
        if junk == NUL:
            assert_refused_naming(response, name)
        else:
            assert response.status_code == 200, (name, junk[:40], response.status_code)


def test_a_point_of_the_scores_chart_drills_down_to_the_sessions_scored_in_it(
    generated: Any, operator_user: User
) -> None:
    """alice's session is judged helpful at 09:12, bob's not helpful at 10:40: a bucket's
    point leads to the sessions given a score in it (of the charted name, or of any)."""
    helpful = ScoreDefinition.objects.create(name="helpful", kind="boolean")
    ScoreDefinition.objects.create(name="tone", kind="numeric", minimum=0, maximum=5)
    for session, value, minute in (
        (generated["mine"], True, 12),
        (generated["theirs"], False, 100),
    ):
        score, _ = score_record(session=session, given=ScoreGiven("helpful", value),
                                source="person", actor=operator_user)  # fmt: skip
        Score.objects.filter(pk=score.pk).update(updated_at=T0 + timedelta(minutes=minute))

    def scored(start: int, end: int) -> dict[str, str]:
        return {
            "scores_from": (T0 + timedelta(minutes=start)).isoformat(),
            "scores_to": (T0 + timedelta(minutes=end)).isoformat(),
        }

    assert listed(operator_user, **scored(10, 15), score="helpful") == {"s-alice"}
    assert listed(operator_user, **scored(10, 15)) == {"s-alice"}  # of any name
    assert listed(operator_user, **scored(15, 99), score="helpful") == set()
    assert listed(operator_user, **scored(0, 120), score="helpful") == {"s-alice", "s-bob"}
    assert listed(operator_user, **scored(0, 120), score="helpful", score_value="no") == {"s-bob"}
    assert listed(operator_user, **scored(0, 120), score="tone") == set()
    assert listed(operator_user, **scored(0, 120), owner="bob") == {"s-bob"}
    # The window is said on the page; one that cannot be is left out (all sessions listed).
    client = Client()
    client.force_login(operator_user)
    answer = client.get("/", {**scored(10, 15), "score": helpful.name})
    assert "with a score (helpful) given from" in answer.content.decode()
    assert "scores_from=" in answer.context["query"]  # kept by the pages' links
    assert len(listed(operator_user, scores_from="soon", scores_to="later")) == 3
