"""Ingest keys in the admin: an operator makes one (the secret shown once, on the page after
saving, never again), it lets a sender in, and the revoke action refuses it; both audited."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.test import Client

from agentdash.core.models import AuditEntry
from agentdash.ingest.keys import ingest_key_check, ingest_key_create
from agentdash.ingest.models import IngestKey

pytestmark = pytest.mark.django_db

KEY = re.compile(r"agd_[A-Za-z0-9_-]{40}")


@pytest.fixture
def operator_client(operator_user: User) -> Client:
    operator_user.is_staff = True
    operator_user.save()
    client = Client()
    client.force_login(operator_user)
    return client


def test_an_operator_makes_a_key_sees_it_once_and_revokes_it(
    operator_client: Client, operator_user: User
) -> None:
    made = operator_client.post(
        "/admin/ingest/ingestkey/add/",
        {"name": "billing agent", "project": "billing", "owner": operator_user.pk},
        follow=True,
    )
    assert made.status_code == 200
    shown = KEY.findall(made.content.decode())
    assert len(set(shown)) == 1, "the key is shown on the page after saving"
    raw = shown[0]
    key = IngestKey.objects.get()
    assert (key.name, key.project, key.owner) == ("billing agent", "billing", operator_user)
    assert raw not in key.key_hash and key.prefix == raw[:12]
    assert ingest_key_check(raw) == key
    for page in ("/admin/ingest/ingestkey/", f"/admin/ingest/ingestkey/{key.pk}/change/"):
        text = operator_client.get(page).content.decode()
        assert key.prefix in text and raw not in text  # never shown again

    revoked = operator_client.post(
        "/admin/ingest/ingestkey/",
        {"action": "revoke", "_selected_action": [key.pk]},
        follow=True,
    )
    assert "1 key(s) revoked." in revoked.content.decode()
    assert ingest_key_check(raw) is None
    actions = list(AuditEntry.objects.order_by("pk").values_list("action", flat=True))
    assert actions[-2:] == ["ingest_key.create", "ingest_key.revoke"]
    # keys are revoked, never deleted
    assert operator_client.get(f"/admin/ingest/ingestkey/{key.pk}/delete/").status_code == 403


def test_a_user_cannot_reach_the_keys(alice: User) -> None:
    alice.is_staff = True  # even staff without the permissions
    alice.save()
    client = Client()
    client.force_login(alice)
    assert client.get("/admin/ingest/ingestkey/").status_code == 403
    assert (
        client.post(
            "/admin/ingest/ingestkey/add/", {"name": "x", "project": "p", "owner": alice.pk}
        ).status_code
        == 403
    )
    assert IngestKey.objects.count() == 0


def test_a_key_owned_by_someone_else_is_an_admins_to_make(
    operator_client: Client, alice: User, superuser: User
) -> None:
    """Its spans become the owner's sessions: an operator makes keys of their own only."""
    refused = operator_client.post(
        "/admin/ingest/ingestkey/add/",
        {"name": "as alice", "project": "x", "owner": alice.pk},
    )
    assert refused.status_code == 200 and "Only an admin may make a key" in refused.content.decode()
    assert not IngestKey.objects.exists()
    for owner in (alice, superuser):
        with pytest.raises(ValidationError, match="Only an admin"):
            ingest_key_create(name="k", project="x", owner=owner, actor=refused.wsgi_request.user)
    assert not IngestKey.objects.exists()
    admin = Client()
    admin.force_login(superuser)
    admin.post(
        "/admin/ingest/ingestkey/add/", {"name": "for alice", "project": "x", "owner": alice.pk}
    )
    assert IngestKey.objects.get().owner == alice
    assert ingest_key_create(name="shell", project="x", owner=alice, actor=None)[0].owner == alice
