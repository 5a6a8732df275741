"""The Compare page (``/compare/``) over real runs: the inline executor runs a registered
agent on a scripted model, the live pipeline stores its spans, and the page shows the two
sides' differences and deltas — only to someone who may see both sessions, with every
agent's and tool's string escaped."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.test import AsyncClient, Client
from django.urls import reverse
from google.genai import types

from agentdash.agent_sessions.forks import session_fork
from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.runs.models import Run
from agentdash.runs.services import run_enqueue, session_start
from agentdash.spans.models import Span
from runtime import LlmAgent, LlmResponse, ScriptedLlm
from tests.agentdash.runs import conftest as runs_fixtures
from tests.agentdash.runs.conftest import run_ended, says, wait_for
from tests.agentdash.stored import session_of, store_event

pytestmark = pytest.mark.django_db(transaction=True)

# The runs tests' fixtures: agents registered for a test, the inline executor on its loop.
register = runs_fixtures.register
inline = runs_fixtures.inline
host = runs_fixtures.host

AGENT = "compare_weather"
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'
URL = "/compare/"


def answer(text: str, tokens_in: int, tokens_out: int) -> LlmResponse:
    return LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text=text)]),
        finish_reason=types.FinishReason.STOP,
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=tokens_in, candidates_token_count=tokens_out
        ),
    )


def call(city: str, tokens_in: int = 10, tokens_out: int = 2) -> LlmResponse:
    return LlmResponse(
        content=types.Content(
            role="model",
            parts=[
                types.Part(
                    function_call=types.FunctionCall(name="get_weather", args={"city": city})
                )
            ],
        ),
        finish_reason=types.FinishReason.STOP,
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=tokens_in, candidates_token_count=tokens_out
        ),
    )


def agent(script: list[Any]) -> LlmAgent:
    def get_weather(city: str) -> dict[str, str]:
        """The weather in a city."""
        if city == "Evil":
            return {"report": HOSTILE}
        return {"city": city, "report": {"Paris": "sunny", "Lyon": "rainy"}.get(city, "?")}

    return LlmAgent(
        name=AGENT, model=ScriptedLlm(responses=script), tools=[get_weather], output_key="answer"
    )


async def start(user: User, text: str) -> Run:
    run = await sync_to_async(session_start)(agent_name=AGENT, text=text, requested_by=user)
    return await settled(run)


async def settled(run: Run) -> Run:
    ended = await run_ended(run.pk)
    assert ended.status == Run.Status.SUCCEEDED, ended.error

    async def stored() -> bool:
        return await Span.objects.filter(
            trace_id=ended.trace_id, parent_span_id="", end_time__isnull=False
        ).aexists()

    await wait_for(stored, what="the run's spans")
    return ended


async def page(user: User, **query: Any) -> Any:
    client = AsyncClient()
    await client.aforce_login(user)
    return await client.get(URL, query)


async def test_two_sessions_side_by_side_with_differences_and_deltas(
    register: Callable[..., None], host: Any, alice: User
) -> None:
    register(agent([call("Paris"), answer("It is sunny in Paris.", 100, 20),
                    call("Lyon", 12, 3), answer("It is rainy in Lyon.", 150, 40)]))  # fmt: skip
    a = await start(alice, "Weather in Paris?")
    b = await start(alice, "Weather in Paris?")

    response = await page(alice, a=a.session_id, b=b.session_id)

    assert response.status_code == 200
    html = response.content.decode()
    comparison = response.context["comparison"]
    [turn] = comparison.turns
    assert turn.status == "changed" and set(turn.fields) >= {"steps", "answer"}
    tool = turn.steps[0]
    assert tool.status == "changed" and tool.fields == ("args", "result")
    # Highlighted: the changed row and fields, the answer's words, the totals' deltas.
    assert 'class="cmp-row status-changed"' in html and "field-changed" in html
    assert '<span class="w-del">sunny</span>' in html and '<span class="w-ins">rainy</span>' in html
    totals = {row.label: row for row in comparison.totals}
    assert (totals["Input tokens"].left, totals["Input tokens"].right) == (110, 162)
    assert (totals["Output tokens"].left, totals["Output tokens"].right) == (22, 43)
    assert totals["Input tokens"].delta_text == "+52" and "+52" in html
    assert totals["Duration"].left is not None and totals["Duration"].right is not None
    assert ">Tool calls<" in html and "B − A" in html
    state = {k.key: k for k in comparison.state}
    assert state["answer"].status == "changed"
    # Each side links to its session; swapping is one link away.
    for session_id in (a.session_id, b.session_id):
        assert reverse("dashboard:session", kwargs={"session_id": session_id}) in html
    assert f"?a={b.session_id}&amp;b={a.session_id}" in html


async def test_two_runs_of_one_session(
    register: Callable[..., None], host: Any, alice: User
) -> None:
    register(
        agent([call("Paris"), answer("Sunny.", 10, 1), call("Paris"), answer("Sunny!", 10, 1)])
    )
    first = await start(alice, "Weather in Paris?")
    session = await AgentSession.objects.aget(pk=first.session_id)
    second = await sync_to_async(run_enqueue)(
        session=session, agent_name=AGENT, message=says("Weather in Paris?"), requested_by=alice
    )
    second = await settled(second)

    response = await page(alice, a=session.id, a_run=first.pk, b_run=second.pk)

    assert response.status_code == 200
    comparison = response.context["comparison"]
    assert comparison.left.run.pk == first.pk and comparison.right.run.pk == second.pk
    [turn] = comparison.turns  # one run on each side
    assert [p.status for p in turn.steps] == ["same", "changed"]
    assert turn.steps[1].fields == ("text", "state")
    # A run's state is its session's as of the run's last event.
    state = {k.key: (k.status, k.left, k.right) for k in comparison.state}
    assert state["answer"] == ("changed", '"Sunny."', '"Sunny!"')
    assert f"run {first.pk}" in response.content.decode()
    assert (await page(alice, a=session.id, a_run=first.pk, b_run=999_999)).status_code == 404


async def test_a_forks_copied_turns_are_the_same_as_their_originals(
    register: Callable[..., None], host: Any, alice: User
) -> None:
    """A fork copies events, not spans: its copied turns are compared with the spans their
    runs made in the parent (and the parent's parent), so an untouched fork is no different."""
    register(agent([call("Paris"), answer("Sunny.", 10, 1)]))
    run = await start(alice, "Weather in Paris?")
    parent = await AgentSession.objects.aget(pk=run.session_id)
    last = await SessionEvent.objects.filter(session_id=parent.pk).order_by("-seq").afirst()
    assert last is not None
    fork = await sync_to_async(session_fork)(parent=parent, event_id=last.event_id, actor=alice)
    again = await sync_to_async(session_fork)(parent=fork, event_id=last.event_id, actor=alice)

    for left, right in ((parent, fork), (fork, again), (parent, again)):
        response = await page(alice, a=left.pk, b=right.pk)

        assert response.status_code == 200
        comparison = response.context["comparison"]
        [turn] = comparison.turns
        assert turn.left.spans and turn.right.spans, (left.pk, right.pk)
        assert turn.status == "same", (left.pk, right.pk, turn.fields)
        assert comparison.identical
        assert "No differences" in response.content.decode()


async def test_someone_elses_session_is_a_404_and_an_operator_sees_both(
    register: Callable[..., None], host: Any, alice: User, bob: User, operator_user: User
) -> None:
    register(agent([call("Paris"), answer("Sunny.", 1, 1), call("Paris"), answer("Sunny.", 1, 1)]))
    mine = await start(alice, "Weather in Paris?")
    theirs = await start(bob, "Weather in Paris?")

    assert (await page(alice, a=mine.session_id, b=theirs.session_id)).status_code == 404
    assert (await page(alice, a=theirs.session_id, b=mine.session_id)).status_code == 404
    assert (await page(alice, a=theirs.session_id)).status_code == 404
    assert (await page(alice, a=mine.session_id, b="no-such-session")).status_code == 404
    # A run id of someone else's session, under one's own session id: not found either.
    assert (await page(alice, a=mine.session_id, a_run=theirs.pk, b_run=mine.pk)).status_code == 404
    response = await page(operator_user, a=mine.session_id, b=theirs.session_id)
    assert response.status_code == 200 and response.context["comparison"].identical


async def test_hostile_tool_results_and_answers_are_escaped(
    register: Callable[..., None], host: Any, alice: User
) -> None:
    register(agent([call("Evil"), answer(HOSTILE, 1, 1), call("Paris"), answer("Fine.", 1, 1)]))
    a = await start(alice, f"Weather in {HOSTILE}?")
    b = await start(alice, "Weather in Paris?")

    response = await page(alice, a=a.session_id, b=b.session_id)

    assert response.status_code == 200
    html = response.content.decode()
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html  # the answer, the message
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "&lt;script&gt;alert(\\&quot;x\\&quot;)" in html  # the tool's result, as JSON
    assert "<script>" not in html


@pytest.mark.django_db
def test_the_picker_offers_the_users_sessions_of_the_same_agent(
    client: Client, alice: User, bob: User
) -> None:
    a = session_of(alice, "pick-a", AGENT)
    session_of(alice, "pick-mine", AGENT)
    session_of(alice, "pick-other-agent", "other_agent")
    session_of(bob, "pick-bobs", AGENT)
    client.force_login(alice)

    response = client.get(URL, {"a": a.id})

    assert response.status_code == 200
    assert [s.id for s in response.context["others"]] == ["pick-mine"]
    assert 'name="b"' in response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "status"),
    [
        ({}, 400),
        ({"a": "x" * 300}, 400),
        ({"a": "pick-a", "b": "y" * 100_000}, 400),
        ({"a": "pick-a", "a_run": "one"}, 400),
        ({"a": "pick-a", "b_run": "-1"}, 400),
        ({"a": "pick-a", "b_run": str(2**70)}, 400),
        ({"a": "pick-a\x00"}, 400),
        ({"a": "pick-a", "b": "\ud800"}, 404),  # arrives as U+FFFD: no such session
        ({"a": "\U0001f600" * 10}, 404),
    ],
)
def test_hostile_query_parameters_are_refused_not_fatal(
    client: Client, alice: User, query: dict[str, str], status: int
) -> None:
    session_of(alice, "pick-a", AGENT)
    client.force_login(alice)
    encoded = urlencode({k: v.encode("utf-8", "surrogatepass") for k, v in query.items()})
    assert client.get(f"{URL}?{encoded}").status_code == status


@pytest.mark.django_db
def test_a_session_page_links_to_compare_and_a_fork_to_its_parent(
    client: Client, alice: User
) -> None:
    parent = session_of(alice, "the-parent", AGENT)
    store_event(parent.id, "hello")
    client.force_login(alice)
    html = client.get(reverse("dashboard:session", kwargs={"session_id": parent.id})).content
    assert f'href="/compare/?a={parent.id}"' in html.decode()
    if hasattr(AgentSession, "parent"):
        fork = session_of(alice, "the-fork", AGENT)
        AgentSession.objects.filter(pk=fork.id).update(parent=parent)
        html = client.get(reverse("dashboard:session", kwargs={"session_id": fork.id})).content
        assert f"/compare/?a={parent.id}&amp;b={fork.id}" in html.decode()
