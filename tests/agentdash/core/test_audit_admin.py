"""The audit trail in the admin: readable, searchable, never editable — not even by superusers."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agentdash.core.admin import AuditEntryAdmin
from agentdash.core.models import AuditEntry
from agentdash.core.services import audit_record

pytestmark = pytest.mark.django_db


@pytest.fixture
def entry(superuser: User) -> AuditEntry:
    return audit_record(
        actor=superuser,
        action="policy.update",
        target_type="controls.policy",
        target_id="7",
        before={"config": {"q": "<script>alert(1)</script>"}},
        after={"config": {"q": "safe"}, "version": 2},
        reason="tighten",
    )


def client_for(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_list_search_and_filter(superuser: User, entry: AuditEntry) -> None:
    audit_record(actor=None, action="run.cancel_request", target_type="runs.run", target_id="3")
    client = client_for(superuser)
    url = reverse("admin:core_auditentry_changelist")
    page = client.get(url)
    assert page.status_code == 200 and page.context["cl"].result_count == 2
    assert "controls.policy:7" in page.content.decode()
    assert client.get(url, {"q": "tighten"}).context["cl"].result_count == 1
    assert client.get(url, {"action__exact": "run.cancel_request"}).context["cl"].result_count == 1


def test_detail_pretty_prints_before_and_after_escaped(superuser: User, entry: AuditEntry) -> None:
    page = client_for(superuser).get(reverse("admin:core_auditentry_change", args=[entry.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert '<pre class="audit-json">{\n  &quot;config&quot;: {\n    &quot;q&quot;' in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script>alert(1)</script>" not in html
    assert "&quot;version&quot;: 2" in html


def test_nobody_may_add_change_or_delete(superuser: User, entry: AuditEntry) -> None:
    client = client_for(superuser)
    change = reverse("admin:core_auditentry_change", args=[entry.pk])
    assert client.post(change, {"reason": "rewritten", "_save": "Save"}).status_code == 403
    assert client.get(reverse("admin:core_auditentry_add")).status_code == 403
    assert client.post(reverse("admin:core_auditentry_add"), {"action": "x"}).status_code == 403
    delete = reverse("admin:core_auditentry_delete", args=[entry.pk])
    assert client.post(delete, {"post": "yes"}).status_code == 403
    client.post(
        reverse("admin:core_auditentry_changelist"),
        {"action": "delete_selected", "_selected_action": [entry.pk], "post": "yes"},
    )
    stored = AuditEntry.objects.get(pk=entry.pk)
    assert stored.reason == "tighten" and AuditEntry.objects.count() == 1

    from django.contrib import admin

    model_admin = admin.site._registry[AuditEntry]
    assert isinstance(model_admin, AuditEntryAdmin)
    request = client.get(reverse("admin:core_auditentry_changelist")).wsgi_request
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request, stored)
    assert not model_admin.has_delete_permission(request, stored)


def test_operators_can_read_the_trail(staff_operator: User, entry: AuditEntry) -> None:
    client = client_for(staff_operator)
    assert client.get(reverse("admin:core_auditentry_changelist")).status_code == 200
    change = reverse("admin:core_auditentry_change", args=[entry.pk])
    assert client.get(change).status_code == 200
    assert client.post(change, {"reason": "x"}).status_code == 403
