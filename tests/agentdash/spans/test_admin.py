"""Span and change admin: anyone may look, no one may add, change or delete (superusers too)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agentdash.spans.models import Span
from agentdash.spans.services import span_upsert

pytestmark = pytest.mark.django_db


@pytest.fixture
def span() -> Span:
    span_upsert(trace_id="a" * 32, span_id="1" * 16, name="invoke_agent <x>", start_time=1)
    span_upsert(trace_id="b" * 32, span_id="2" * 16, name="other", start_time=2, end_time=9)
    return Span.objects.get(trace_id="a" * 32)


@pytest.fixture
def client(superuser: User) -> Client:
    client = Client()
    client.force_login(superuser)
    return client


def test_list_filters_by_trace(client: Client, span: Span) -> None:
    url = reverse("admin:spans_span_changelist")
    page = client.get(url).content.decode()
    assert "invoke_agent &lt;x&gt;" in page and "other" in page
    filtered = client.get(url, {"trace": "a" * 32})
    assert filtered.status_code == 200
    assert [s.pk for s in filtered.context["cl"].result_list] == [span.pk]
    assert client.get(url, {"session": "none-such"}).context["cl"].result_count == 0


def test_spans_cannot_be_added_changed_or_deleted(client: Client, span: Span) -> None:
    change = reverse("admin:spans_span_change", args=[span.pk])
    assert client.get(change).status_code == 200  # view only
    assert client.post(change, {"name": "renamed", "_save": "Save"}).status_code == 403
    add = reverse("admin:spans_span_add")
    assert client.get(add).status_code == 403
    assert client.post(add, {"name": "new", "_save": "Save"}).status_code == 403
    delete = reverse("admin:spans_span_delete", args=[span.pk])
    assert client.post(delete, {"post": "yes"}).status_code == 403
    client.post(
        reverse("admin:spans_span_changelist"),
        {"action": "delete_selected", "_selected_action": [span.pk], "post": "yes"},
    )
    assert Span.objects.get(pk=span.pk).name == "invoke_agent <x>"
    assert Span.objects.count() == 2


def test_session_change_admin_is_read_only(client: Client) -> None:
    assert client.get(reverse("admin:changes_sessionchange_changelist")).status_code == 200
    assert client.get(reverse("admin:changes_sessionchange_add")).status_code == 403
