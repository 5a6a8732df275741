"""Scores over HTTP and through the service: each kind of definition takes its values and no
other, a session's owner and operators score the session, its runs and its spans (a person's
second score replaces their first), bad input is a 400 naming the field with nothing stored,
someone else's session a 403 (the same as for a session that does not exist: its id is not
confirmed) and the service's refusal a 403;
definitions are checked and audited, and keep their name and kind once they have scores."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.test import Client

from agentdash.agent_sessions.models import AgentSession
from agentdash.core.models import AuditEntry
from agentdash.runs.models import Run
from agentdash.scores.models import Score, ScoreDefinition
from agentdash.scores.services import ScoreGiven, definition_save, score_record
from agentdash.spans.services import span_upsert
from tests.agentdash.hostile import NUL, SURROGATE
from tests.agentdash.stored import session_of

pytestmark = [pytest.mark.django_db, pytest.mark.database]


@pytest.fixture
def definitions(operator_user: User) -> dict[str, ScoreDefinition]:
    made = {}
    for name, kind, extra in (
        ("correct", "boolean", {}),
        ("helpful", "number", {"minimum": 1, "maximum": 5}),
        ("failure", "category", {"categories": ["wrong tool", "hallucination"]}),
    ):
        made[name] = definition_save(
            definition=ScoreDefinition(name=name, kind=kind, **extra), actor=operator_user
        )
    return made


@pytest.fixture
def session(alice: User) -> AgentSession:
    found = session_of(alice, "s-scored", "capital_agent")
    Run.objects.create(session=found, agent_name="capital_agent", invocation_id="e-1",
                       status="succeeded", message={})  # fmt: skip
    span_upsert(trace_id="a" * 32, span_id="b" * 16, name="execute_tool get_capital",
                start_time=1, end_time=2, session_id=found.pk,
                attributes={"agentdash.span.kind": "tool"})  # fmt: skip
    return found


def post(user: User, session_id: str, body: Any) -> Any:
    client = Client()
    client.force_login(user)
    return client.post(f"/sessions/{session_id}/scores/", json.dumps(body),
                       content_type="application/json")  # fmt: skip


def test_each_kind_takes_its_values_on_the_session_a_run_and_a_span(
    definitions: Any, session: AgentSession, alice: User
) -> None:
    run = session.runs.get()
    said = post(alice, session.pk, {"name": "correct", "value": True, "comment": "right city"})
    assert said.status_code == 201, said.content
    assert said.json()["score"]["value"] == "yes" and said.json()["score"]["author"] == "alice"
    said = post(alice, session.pk, {"name": "helpful", "value": 4, "target": "run", "run": run.pk})
    assert said.status_code == 201 and said.json()["score"]["value"] == 4.0
    span = {"target": "span", "trace_id": "a" * 32, "span_id": "b" * 16}
    said = post(alice, session.pk, {"name": "failure", "value": "wrong tool", **span})
    assert said.status_code == 201 and said.json()["score"]["value"] == "wrong tool"
    # A second score of the same thing by the same person replaces the first.
    again = post(alice, session.pk, {"name": "correct", "value": "no"})
    assert again.status_code == 200 and again.json()["score"]["value"] == "no"
    client = Client()
    client.force_login(alice)
    listed = client.get(f"/sessions/{session.pk}/scores/").json()
    names = [d["name"] for d in listed["definitions"]]  # and the chat's, when the migration's
    assert names == sorted(names) and {"correct", "failure", "helpful"} <= set(names)
    assert sorted((s["name"], s["target"], s["value"]) for s in listed["scores"]) == [
        ("correct", "session", "no"), ("failure", "span", "wrong tool"), ("helpful", "run", 4.0),
    ]  # fmt: skip
    assert AuditEntry.objects.filter(action="score.record").count() == 4


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "nope", "value": True}, "name"),
        ({"name": "helpful", "value": 6}, "value"),
        ({"name": "helpful", "value": 0}, "value"),
        ({"name": "helpful", "value": "4"}, "value"),
        ({"name": "helpful", "value": True}, "value"),
        ({"name": "correct", "value": "maybe"}, "value"),
        ({"name": "failure", "value": "rude"}, "value"),
        ({"name": "correct", "value": True, "target": "run", "run": 999_999}, "run"),
        ({"name": "correct", "value": True, "target": "run", "run": "1"}, "run"),
        (
            {
                "name": "correct",
                "value": True,
                "target": "span",
                "trace_id": "a" * 32,
                "span_id": "c" * 16,
            },
            "span",
        ),
        ({"name": "correct", "value": True, "target": "everything"}, "target"),
        ({"name": "correct", "value": True, "comment": "x" * 2001}, "comment"),
        ({"name": "correct", "value": True, "comment": NUL}, "comment"),
        ({"name": "correct", "value": True, "comment": SURROGATE}, "comment"),
        ({"name": "correct", "value": True, "comment": {"a": 1}}, "comment"),
        ({"name": "correct", "value": True, "source": "evaluator"}, "source"),
        ([1, 2], "body"),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_nothing_is_stored(
    definitions: Any, session: AgentSession, alice: User, body: Any, field: str
) -> None:
    said = post(alice, session.pk, body)
    assert said.status_code == 400, said.content
    assert said.json()["error"]["field"] == field
    assert not Score.objects.exists()


def test_bad_bodies_are_refused_whole(definitions: Any, session: AgentSession, alice: User) -> None:
    client = Client()
    client.force_login(alice)
    url = f"/sessions/{session.pk}/scores/"
    for body in ("{", "[" * 5000 + "]" * 5000, '{"name": NaN}'):
        said = client.post(url, body, content_type="application/json")
        assert said.status_code == 400 and said.json()["error"]["field"] == "body"
    huge = client.post(url, "x" * 30_000, content_type="application/json")
    assert huge.status_code == 413
    assert not Score.objects.exists()


def test_only_the_owner_and_operators_score_and_take_back(
    definitions: Any, session: AgentSession, alice: User, bob: User, operator_user: User
) -> None:
    foreign = post(bob, session.pk, {"name": "correct", "value": True})
    assert foreign.status_code == 403 and foreign.json()["error"]["field"] == "session"
    missing = post(bob, "0" * 32, {"name": "correct", "value": True})
    assert missing.status_code == 403 and missing.json() == foreign.json()
    assert Client().get(f"/sessions/{session.pk}/scores/").status_code == 302  # log in first
    with pytest.raises(PermissionDenied):  # the service itself, handed the session
        score_record(session=session, given=ScoreGiven("correct", True), source="person",
                     actor=bob)  # fmt: skip
    mine = post(alice, session.pk, {"name": "correct", "value": True}).json()["score"]
    theirs = post(operator_user, session.pk, {"name": "correct", "value": False}).json()["score"]
    assert mine["id"] != theirs["id"]  # one score each
    client = Client()
    client.force_login(alice)
    gone = client.post(f"/sessions/{session.pk}/scores/{theirs['id']}/delete/")
    assert gone.status_code == 403  # not hers to take back
    assert client.post(f"/sessions/{session.pk}/scores/{mine['id']}/delete/").status_code == 200
    assert list(Score.objects.values_list("pk", flat=True)) == [theirs["id"]]
    assert AuditEntry.objects.filter(action="score.delete").count() == 1
    # An evaluator scores as no one, under its own name.
    score, made = score_record(session=session, given=ScoreGiven("helpful", 2),
                               source="evaluator", actor=None, author="judge")  # fmt: skip
    assert made and score.author_name == "judge" and score.author is None


def test_definitions_are_checked_and_keep_their_meaning_once_used(
    definitions: Any, session: AgentSession, alice: User, operator_user: User
) -> None:
    for bad, field in (
        (ScoreDefinition(name="a", kind="number", minimum=5, maximum=1), "maximum"),
        (ScoreDefinition(name="b", kind="number"), "minimum"),
        (ScoreDefinition(name="c", kind="category", categories=[]), "categories"),
        (ScoreDefinition(name="d", kind="category", categories=["x", "x"]), "categories"),
        (ScoreDefinition(name="e", kind="boolean", categories=["x"]), "categories"),
        (ScoreDefinition(name="f", kind="boolean", minimum=1), "minimum"),
    ):
        with pytest.raises(ValidationError) as refused:
            definition_save(definition=bad, actor=operator_user)
        assert field in refused.value.message_dict
    with pytest.raises(PermissionDenied):
        definition_save(definition=ScoreDefinition(name="g", kind="boolean"), actor=alice)
    post(alice, session.pk, {"name": "correct", "value": True})
    used = definitions["correct"]
    used.kind = "number"
    used.minimum, used.maximum = 0, 1
    with pytest.raises(ValidationError, match="keep the name and kind"):
        definition_save(definition=used, actor=operator_user)
    helpful = definitions["helpful"]
    helpful.enabled = False  # turned off: no new scores, the old ones kept
    definition_save(definition=helpful, actor=operator_user)
    said = post(alice, session.pk, {"name": "helpful", "value": 3})
    assert said.status_code == 400 and said.json()["error"]["field"] == "name"
    assert AuditEntry.objects.filter(action="score_definition.save").count() == 4


def test_scores_round_trip_through_the_api_and_the_export(
    definitions: Any, session: AgentSession, alice: User
) -> None:
    run = session.runs.get()
    post(alice, session.pk, {"name": "helpful", "value": 5, "target": "run", "run": run.pk,
                             "comment": "<b>great</b> \u2014 quick"})  # fmt: skip
    by_invocation = post(alice, session.pk, {"name": "correct", "value": False,
                                             "target": "run", "invocation_id": "e-1"})  # fmt: skip
    assert by_invocation.json()["score"]["run"] == run.pk  # the chat names runs this way
    client = Client()
    client.force_login(alice)
    listed = client.get(f"/sessions/{session.pk}/scores/").json()["scores"]
    exported = json.loads(
        b"".join(client.get(f"/sessions/{session.pk}/export/session/").streaming_content)
    )["scores"]
    assert exported == [{k: v for k, v in s.items() if k != "mine"} for s in listed]
    assert [(s["name"], s["value"], s["invocation_id"]) for s in exported] == [
        ("helpful", 5.0, "e-1"), ("correct", "no", "e-1")]  # fmt: skip
    assert exported[0]["comment"] == "<b>great</b> \u2014 quick"  # as given: escaped where shown


def test_the_sessions_list_finds_sessions_by_a_score(
    definitions: Any, session: AgentSession, alice: User, operator_user: User
) -> None:
    other = session_of(alice, "s-other", "capital_agent")
    plain = session_of(alice, "s-plain", "capital_agent")
    for scored, correct, helpful in ((session, True, 2), (other, False, 5)):
        score_record(session=scored, given=ScoreGiven(name="correct", value=correct),
                     source="person", actor=alice)  # fmt: skip
        score_record(session=scored, given=ScoreGiven(name="helpful", value=helpful),
                     source="person", actor=operator_user)  # fmt: skip
    client = Client()
    client.force_login(operator_user)

    def listed(query: str) -> tuple[set[str], str]:
        page = client.get(f"/?{query}")
        assert page.status_code == 200
        return {row["id"] for row in page.context["page"].rows}, page.content.decode()

    assert listed("score=correct&score_value=no")[0] == {other.pk}
    assert listed("score=correct&score_value=YES")[0] == {session.pk}
    assert listed("score=helpful&score_value=%3C3")[0] == {session.pk}  # <3
    assert listed("score=helpful&score_value=%3E%3D+5")[0] == {other.pk}  # >= 5
    assert listed("score=helpful&score_value=5")[0] == {other.pk}
    assert listed("score=helpful")[0] == {session.pk, other.pk}  # any value
    assert listed("score=failure")[0] == set()
    # A condition its kind cannot take is said, and the list is not narrowed by it.
    for query, said in (
        ("score=helpful&score_value=lots", "a number, or"),
        ("score=correct&score_value=maybe", "correct is yes or no"),
        ("score=failure&score_value=%3Cb%3E", "failure is one of: wrong tool"),
    ):
        ids, html = listed(query)
        assert plain.pk in ids and said in html, query
    ids, html = listed("score=nope&score_value=1")
    assert plain.pk in ids and "Select a valid choice" in html
    assert client.get(f"/?score=correct&score_value=no{NUL}").status_code == 400
    # alice sees her own sessions by score too, and nobody else's.
    client.force_login(alice)
    assert listed("score=helpful&score_value=%3C3")[0] == {session.pk}


def test_scores_go_out_in_otlp_as_evaluation_events_on_what_they_score(
    definitions: Any, session: AgentSession, alice: User, operator_user: User
) -> None:
    run = session.runs.get()
    span_upsert(trace_id="c" * 32, span_id="d" * 16, name="invocation", start_time=5,
                end_time=9, session_id=session.pk, run_id=run.pk)  # fmt: skip
    span_upsert(trace_id="c" * 32, span_id="e" * 16, parent_span_id="d" * 16, name="call_llm",
                start_time=6, end_time=8, session_id=session.pk, run_id=run.pk)  # fmt: skip
    post(alice, session.pk, {"name": "failure", "value": "hallucination", "target": "span",
                             "trace_id": "c" * 32, "span_id": "e" * 16,
                             "comment": "said Lyon"})  # fmt: skip
    post(alice, session.pk, {"name": "helpful", "value": 2, "target": "run", "run": run.pk})
    post(operator_user, session.pk, {"name": "correct", "value": "yes"})
    client = Client()
    client.force_login(alice)
    document = json.loads(
        b"".join(client.get(f"/sessions/{session.pk}/export/otlp/").streaming_content)
    )
    spans = [s for group in document["resourceSpans"] for scope in group["scopeSpans"]
             for s in scope["spans"]]  # fmt: skip

    def said(span_id: str) -> list[dict[str, Any]]:
        (span,) = [s for s in spans if s["spanId"] == span_id]
        events = [e for e in span.get("events", []) if e["name"] == "gen_ai.evaluation.result"]
        return [
            {kv["key"]: next(iter(kv["value"].values())) for kv in e["attributes"]} for e in events
        ]

    assert said("e" * 16) == [{
        "gen_ai.evaluation.name": "failure", "gen_ai.evaluation.score.label": "hallucination",
        "gen_ai.evaluation.explanation": "said Lyon", "agentdash.score.target": "span",
        "agentdash.score.source": "person", "agentdash.score.author": "alice",
    }]  # fmt: skip
    on_run = said("d" * 16)  # the run's root span: the run's score
    assert [(e["gen_ai.evaluation.name"], e.get("gen_ai.evaluation.score.value")) for e in on_run
            ] == [("helpful", 2.0)]  # fmt: skip
    # The session's: on the first root span written (the span of no run, which starts first).
    assert [(e["gen_ai.evaluation.name"], e["gen_ai.evaluation.score.label"],
             e["agentdash.score.author"]) for e in said("b" * 16)] == [
        ("correct", "yes", "operator")]  # fmt: skip
    # The same in protobuf.
    from tests.agentdash.dashboard.test_export_protobuf import decoded

    proto = decoded(b"".join(client.get(
        f"/sessions/{session.pk}/export/otlp/?encoding=protobuf").streaming_content))  # fmt: skip
    names = sorted(
        a.value.string_value for rs in proto.resource_spans for ss in rs.scope_spans
        for sp in ss.spans for e in sp.events for a in e.attributes
        if a.key == "gen_ai.evaluation.name"
    )  # fmt: skip
    assert names == ["correct", "failure", "helpful"]


def test_the_sessions_list_sorts_by_a_scores_mean_page_by_page(
    definitions: Any, alice: User, operator_user: User
) -> None:
    made = []
    for n, values in enumerate([(5,), (1, 2), (4,), (3, 3)]):
        scored = session_of(alice, f"s-sort-{n}", "capital_agent")
        for m, value in enumerate(values):
            author = operator_user if m == 0 else alice
            score_record(session=scored, given=ScoreGiven(name="helpful", value=value),
                         source="person", actor=author)  # fmt: skip
        made.append(scored.pk)
    session_of(alice, "s-unscored", "capital_agent")
    client = Client()
    client.force_login(operator_user)

    def ids(query: str) -> tuple[list[str], Any]:
        page = client.get(f"/?score=helpful&{query}")
        assert page.status_code == 200
        return [row["id"] for row in page.context["page"].rows], page

    lowest, page = ids("sort=score")
    assert lowest == [made[1], made[3], made[2], made[0]]  # means 1.5, 3, 4, 5; unscored out
    assert "page 1, by score" in page.content.decode() and 'class="num session-score">1.50' in (
        page.content.decode())  # fmt: skip
    assert ids("sort=-score")[0] == [made[0], made[2], made[3], made[1]]
    from agentdash.dashboard.sessions_list import reads

    first = reads.session_list_page(user=operator_user, limit=3, filters=reads.SessionListFilters(
        scored=None, score_name="helpful", sort="score", page=1))  # fmt: skip
    second = reads.session_list_page(user=operator_user, limit=3, filters=reads.SessionListFilters(
        scored=None, score_name="helpful", sort="score", page=2))  # fmt: skip
    assert first.more and not second.more and second.page == 2
    shown = [r["id"] for r in first.rows + second.rows]
    assert shown[:4] == [made[1], made[3], made[2], made[0]] and len(shown) == len(set(shown))
    assert ids("sort=sideways")[1].context["filters"].errors  # said, and the list by activity
