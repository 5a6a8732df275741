"""API tokens (docs/SCORES.md, "Scripts"): made on /tokens/ and shown once, kept as a hash;
a script with ``Authorization: Bearer`` scores as its person — source ``api``, no CSRF token,
nobody else's sessions —; a revoked, unknown or malformed token is a 401; a person's page
still needs its CSRF token."""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agentdash.core.models import ApiToken, AuditEntry
from agentdash.scores.models import Score, ScoreDefinition
from tests.agentdash.stored import session_of

pytestmark = [pytest.mark.django_db, pytest.mark.database]


def made_token(client: Client, name: str = "nightly") -> str:
    page = client.post("/tokens/", {"name": name}).content.decode()
    found = re.search(r'<code id="token-made">(adt_[^<]+)</code>', page)
    assert found, page[-2000:]
    return found.group(1)


def test_a_script_scores_with_its_persons_token(alice: User, bob: User) -> None:
    ScoreDefinition.objects.create(name="correct", kind="boolean")
    hers = session_of(alice, "s-hers", "capital_agent")
    his = session_of(bob, "s-his", "capital_agent")
    person = Client()
    person.force_login(alice)
    raw = made_token(person)
    stored = ApiToken.objects.get()
    assert raw.startswith(stored.prefix) and raw not in stored.key_hash
    assert raw not in person.get("/tokens/").content.decode()  # shown once
    script = Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=f"Bearer {raw}")
    body = json.dumps({"name": "correct", "value": True, "source": "person"})
    given = script.post(f"/sessions/{hers.pk}/scores/", body, content_type="application/json")
    assert given.status_code == 201, given.content
    assert given.json()["score"]["source"] == "api" and given.json()["score"]["author"] == "alice"
    assert script.get(f"/sessions/{hers.pk}/scores/").json()["scores"][0]["mine"] is True
    assert script.post(f"/sessions/{his.pk}/scores/", body,
                       content_type="application/json").status_code == 403  # fmt: skip
    score = Score.objects.get()
    assert script.post(f"/sessions/{hers.pk}/scores/{score.pk}/delete/").status_code == 200
    # Without a token, the same POST from a signed-in page needs its CSRF token.
    person = Client(enforce_csrf_checks=True)
    person.force_login(alice)
    assert person.post(f"/sessions/{hers.pk}/scores/", body,
                       content_type="application/json").status_code == 403  # fmt: skip
    stored.refresh_from_db()
    assert stored.last_used_at is not None
    assert AuditEntry.objects.filter(action="api_token.create").count() == 1


@pytest.mark.parametrize("said", ["Bearer adt_nope", "Bearer ", "Bearer agd_" + "x" * 40,
                                  "Bearer adt_" + "y" * 300])  # fmt: skip
def test_an_unknown_or_malformed_token_is_a_401(alice: User, said: str) -> None:
    hers = session_of(alice, "s-hers", "capital_agent")
    script = Client(HTTP_AUTHORIZATION=said)
    answer = script.get(f"/sessions/{hers.pk}/scores/")
    assert answer.status_code == 401 and answer["WWW-Authenticate"].startswith("Bearer")
    assert answer.json()["error"]["field"] == "authorization"


def test_a_revoked_token_is_refused_and_only_its_owner_revokes_it(alice: User, bob: User) -> None:
    hers = session_of(alice, "s-hers", "capital_agent")
    person = Client()
    person.force_login(alice)
    raw = made_token(person)
    token = ApiToken.objects.get()
    other = Client()
    other.force_login(bob)
    said = other.post("/tokens/", {"action": "revoke", "token": token.pk}).content.decode()
    assert "no such token of yours" in said
    script = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert script.get(f"/sessions/{hers.pk}/scores/").status_code == 200
    person.post("/tokens/", {"action": "revoke", "token": token.pk})
    assert script.get(f"/sessions/{hers.pk}/scores/").status_code == 401
    assert "revoked" in person.get("/tokens/").content.decode()
    assert person.post("/tokens/", {"name": ""}).status_code == 200
    assert ApiToken.objects.count() == 1  # a token needs a name
