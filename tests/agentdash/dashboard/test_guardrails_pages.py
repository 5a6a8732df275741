"""The guardrails pages: a session's decisions (its owner and operators), an agent's
decisions and policies (operators), and an operator's policy edit — validated, previewed as a
diff, saved as the next version, refused when stale, listed in the history."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agentdash.agent_sessions.models import AgentSession
from agentdash.controls.models import Policy
from agentdash.controls.services import policy_create
from agentdash.registry.models import AgentRecord
from agentdash.spans.services import spans_store
from agentdash.spans.span_version import SpanVersion
from runtime.telemetry.attributes import AgentDash
from tests.agentdash.stored import session_of

pytestmark = pytest.mark.django_db

TRACE = "ab" * 16
HOSTILE = '<img src=x onerror="alert(1)"> \u0000 \ud800'


def decided(
    session: AgentSession, i: int, guardrail: str, decision: str, reason: str
) -> SpanVersion:
    return SpanVersion(
        trace_id=TRACE,
        span_id=f"{i + 1:016x}",
        name=f"callback {guardrail}",
        start_time=1_700_000_000_000_000_000 + i * 1_000_000,
        end_time=1_700_000_000_000_000_000 + i * 1_000_000 + 500,
        session_id=session.id,
        attributes={
            AgentDash.SPAN_KIND: "callback",
            AgentDash.CALLBACK_NAME: guardrail,
            AgentDash.CALLBACK_HOOK: "before_model",
            "gen_ai.agent.name": session.app_name,
            AgentDash.GUARDRAIL_NAME: guardrail,
            AgentDash.GUARDRAIL_DECISION: decision,
            AgentDash.GUARDRAIL_REASON: reason,
            AgentDash.GUARDRAIL_POLICY: "demo input screen@3",
        },
    )


@pytest.fixture
def session(alice: User) -> AgentSession:
    AgentRecord.objects.update_or_create(
        name="support_desk",
        defaults={
            "dotted_path": "x:y",
            "sub_agents": [{"name": "billing_agent", "sub_agents": []}],
        },
    )
    found = session_of(alice, "s-guard", app_name="support_desk")
    spans_store(
        versions=[
            decided(found, 0, "input-screen", "allowed", "no blocked term or pattern matched"),
            decided(
                found, 1, "input-screen", "blocked", "the message matched blocked term 'lawsuit'"
            ),
            decided(found, 2, "output-redaction", "redacted", "masked 1 e-mail"),
            decided(found, 3, "tool-guard", "blocked", HOSTILE),
            SpanVersion(
                trace_id=TRACE, span_id=f"{9:016x}", name="plain", start_time=1, session_id=found.id
            ),
        ]
    )
    return found


def login(client: Client, user: User) -> Client:
    client.force_login(user)
    return client


def test_the_owner_sees_the_sessions_decisions_counted_and_linked(
    client: Client, alice: User, session: AgentSession
) -> None:
    page = login(client, alice).get(reverse("dashboard:session_guardrails", args=[session.id]))
    assert page.status_code == 200
    html = page.content.decode()
    counts = {c.guardrail: c.by_decision for c in page.context["counts"]}
    assert counts == {
        "input-screen": {"allowed": 1, "blocked": 1},
        "output-redaction": {"redacted": 1},
        "tool-guard": {"blocked": 1},
    }
    assert page.context["totals"] == [1, 2, 1, 0, 0]  # allowed, blocked, redacted, unsafe, limit
    rows = page.context["rows"]
    assert [r.guardrail for r in rows] == [
        "tool-guard",
        "output-redaction",
        "input-screen",
        "input-screen",
    ]
    assert f"?trace={TRACE}&amp;span={2:016x}" in html  # each row links to its span
    assert "the message matched blocked term &#x27;lawsuit&#x27;" in html
    assert "<img src=x" not in html and "&lt;img src=x" in html  # hostile reason as text
    # narrowed: only what stopped something, only one guardrail
    stopped = client.get(
        reverse("dashboard:session_guardrails", args=[session.id]), {"decision": "stopped"}
    )
    assert {r.decision for r in stopped.context["rows"]} == {"blocked", "redacted"}
    one = client.get(
        reverse("dashboard:session_guardrails", args=[session.id]), {"guardrail": "tool-guard"}
    )
    assert [r.guardrail for r in one.context["rows"]] == ["tool-guard"]
    odd = client.get(
        reverse("dashboard:session_guardrails", args=[session.id]), {"decision": "<x>"}
    )
    assert odd.status_code == 200 and len(odd.context["rows"]) == 4  # an unknown filter is none


def test_someone_elses_session_is_not_found_and_operators_see_it(
    client: Client, bob: User, operator_user: User, session: AgentSession
) -> None:
    url = reverse("dashboard:session_guardrails", args=[session.id])
    assert login(client, bob).get(url).status_code == 404
    assert login(Client(), operator_user).get(url).status_code == 200
    assert Client().get(url).status_code == 302  # to the login page


def test_the_agent_page_is_for_operators_and_lists_its_policies(
    client: Client, alice: User, operator_user: User, session: AgentSession
) -> None:
    policy_create(name="screen", kind="input_screen", config={"blocked_terms": ["lawsuit"]},
                  agents=["billing_agent"], actor=None)  # fmt: skip
    policy_create(name="elsewhere", kind="step_limits", config={"max_model_calls": 3},
                  agents=["data_agent"], actor=None)  # fmt: skip
    url = reverse("dashboard:agent_guardrails", args=["support_desk"])
    assert login(client, alice).get(url).status_code == 403
    page = login(Client(), operator_user).get(url)
    assert page.status_code == 200
    assert [p.name for p in page.context["policies"]] == ["screen"]  # a sub-agent's policy
    (row,) = page.context["sessions"]
    assert (row.session_id, row.stopped, row.total) == (session.id, 3, 4)
    assert len(page.context["rows"]) == 4
    missing = login(Client(), operator_user).get(
        reverse("dashboard:agent_guardrails", args=["nope"])
    )
    assert missing.status_code == 404


@pytest.fixture
def policy() -> Policy:
    return policy_create(name="screen", kind="input_screen", config={"blocked_terms": ["lawsuit"]},
                         agents=["support_desk"], actor=None)  # fmt: skip


def form(policy: Policy, config: Any, action: str, **extra: Any) -> dict[str, Any]:
    return {
        "config": config if isinstance(config, str) else json.dumps(config),
        "agents_text": " ".join(policy.agents),
        "enabled": "on",
        "reason": "let legal questions through",
        "loaded_version": policy.version,
        "action": action,
        **extra,
    }


def test_an_operator_previews_then_saves_a_new_version(
    client: Client, operator_user: User, policy: Policy
) -> None:
    url = reverse("dashboard:policy_edit", args=[policy.pk])
    login(client, operator_user)
    preview = client.post(url, form(policy, {"blocked_terms": []}, "preview"))
    assert preview.status_code == 200
    (change,) = preview.context["preview"]["changes"]
    assert (change.key, change.before, change.after) == ("blocked_terms", '["lawsuit"]', "[]")
    policy.refresh_from_db()
    assert policy.version == 1  # a preview saves nothing
    saved = client.post(f"{url}?agent=support_desk", form(policy, {"blocked_terms": []}, "save"))
    assert saved.status_code == 302 and saved["Location"].endswith("?agent=support_desk")
    policy.refresh_from_db()
    assert (policy.version, policy.config["blocked_terms"]) == (2, [])
    page = client.get(url)
    (latest, first) = page.context["history"][:2]
    assert (latest.version, latest.action, latest.reason) == (
        2,
        "update",
        "let legal questions through",
    )
    assert [(c.key, c.change) for c in latest.changes] == [("blocked_terms", "changed")]
    assert first.version == 1 and first.action == "create"
    assert "Saved screen as version 2." in page.content.decode()


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("{not json", "Enter a valid JSON"),
        ({"blocked_patterns": ["("]}, "not valid"),
        ({"blocked_terms": "lawsuit"}, "must be a list, not a string"),
        ({"blocks": []}, "Unknown key"),
    ],
)
def test_a_bad_config_is_refused_and_nothing_is_lost(
    client: Client, operator_user: User, policy: Policy, config: Any, message: str
) -> None:
    page = login(client, operator_user).post(
        reverse("dashboard:policy_edit", args=[policy.pk]), form(policy, config, "save")
    )
    assert page.status_code == 200
    assert message in page.content.decode()
    typed = page.context["form"]["config"].value()  # what was typed is still there
    assert typed == config if isinstance(config, str) else json.loads(typed) == config
    policy.refresh_from_db()
    assert policy.version == 1


def test_a_stale_edit_is_refused(client: Client, operator_user: User, policy: Policy) -> None:
    url = reverse("dashboard:policy_edit", args=[policy.pk])
    login(client, operator_user)
    stale = form(policy, {"blocked_terms": ["a"]}, "save")
    client.post(url, form(policy, {"blocked_terms": ["b"]}, "save"))
    page = client.post(url, stale)
    assert page.status_code == 200
    assert "version 2" in page.content.decode()
    policy.refresh_from_db()
    assert (policy.version, policy.config["blocked_terms"]) == (2, ["b"])


def test_only_operators_edit_policies(client: Client, alice: User, policy: Policy) -> None:
    url = reverse("dashboard:policy_edit", args=[policy.pk])
    assert login(client, alice).get(url).status_code == 403
    assert client.post(url, form(policy, {"blocked_terms": []}, "save")).status_code == 403
    policy.refresh_from_db()
    assert policy.version == 1


def test_operators_find_an_agents_guardrails_from_the_home_page(
    client: Client, alice: User, operator_user: User, session: AgentSession
) -> None:
    link = reverse("dashboard:agent_guardrails", args=["support_desk"])
    AgentRecord.objects.filter(name="support_desk").update(available=True)
    assert link in login(Client(), operator_user).get(reverse("dashboard:home")).content.decode()
    assert link not in login(client, alice).get(reverse("dashboard:home")).content.decode()
