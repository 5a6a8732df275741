"""A refused request answers 403 with a page that says what was refused, which role would be
allowed and the way back (templates/403.html) — or JSON, for a client that asks for JSON."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import reverse

from agentdash.controls.services import policy_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def policy_url(db: None) -> str:
    policy = policy_create(
        name="screen", kind="input_screen", config={"blocked_terms": ["x"]}, agents=[], actor=None
    )
    return reverse("dashboard:policy_edit", args=[policy.pk])


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("/evals/", "Only operators work with eval sets."),
        ("/waiting/", "Only operators see every waiting run."),
        ("policy", "Only operators see an agent&#x27;s guardrails."),
    ],
)
def test_a_plain_user_is_told_why_which_role_and_the_way_back(
    client: Client, alice: User, policy_url: str, url: str, reason: str
) -> None:
    client.force_login(alice)
    response = client.get(policy_url if url == "policy" else url)
    assert response.status_code == 403
    assert [t.name for t in response.templates][:2] == ["403.html", "base.html"]
    page = response.content.decode()
    assert '<h1 id="forbidden-title">Not allowed</h1>' in page
    assert reason in page
    assert "This needs the operator role, which alice does not have." in page
    assert "<strong>Operators</strong> group" in page
    assert f'<a href="{reverse("dashboard:home")}">Back to your sessions</a>' in page


def test_an_operator_without_one_permission_is_told_which(
    client: Client, operator_user: User, policy_url: str
) -> None:
    change = Permission.objects.get(codename="change_policy")
    operator_user.groups.get().permissions.remove(change)
    client.force_login(operator_user)
    response = client.get(policy_url)
    assert response.status_code == 403
    page = response.content.decode()
    assert "Changing policies is not allowed." in page
    assert "operator is an operator, but this needs the permission" in page
    assert "<code>controls.change_policy</code>" in page
    assert "This needs the operator role" not in page  # they have it
    assert "Back to your sessions" in page
    response = client.get(policy_url, headers={"Accept": "application/json"})
    assert json.loads(response.content)["error"] == {
        "code": "forbidden",
        "message": "changing policies is not allowed",
        "role": "operator",
        "permission": "controls.change_policy",
    }


def test_a_refusal_that_names_no_role_says_only_what_was_refused(
    client: Client, alice: User, operator_user: User
) -> None:
    from tests.agentdash.stored import session_of

    hers = session_of(alice, "alices-session")
    client.force_login(operator_user)  # sees it, may not rename it: it is not theirs
    response = client.post(reverse("dashboard:session_rename", args=[hers.id]), {"title": "x"})
    assert response.status_code == 403
    page = response.content.decode()
    assert "Only the session&#x27;s owner may rename it." in page
    assert "operator role" not in page and "permission <code>" not in page
    assert "Back to your sessions" in page


def test_a_client_that_asks_for_json_gets_json(client: Client, alice: User) -> None:
    client.force_login(alice)
    response = client.get("/evals/", headers={"Accept": "application/json"})
    assert response.status_code == 403
    assert response["Content-Type"] == "application/json"
    assert json.loads(response.content) == {
        "error": {
            "code": "forbidden",
            "message": "only operators work with eval sets",
            "role": "operator",
        }
    }
