"""Rows written before strings were checked where they enter: on SQLite a lone surrogate
could be kept as a JSON escape (and the admin page showing the row failed with a 500). The
``*_stored_strings_made_storable`` migrations replace such characters; after them, the span,
run and session pages of the admin open. On PostgreSQL such rows could never be stored (the
migrations do nothing there): the test shows that instead."""

from __future__ import annotations

import json
import time

import pytest
from django.contrib.auth.models import User
from django.db import DataError, connection
from django.test import Client

from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.core.hygiene import REPLACEMENT
from agentdash.core.migration_ops import STORAGE_REPLACED
from agentdash.runs.models import Run
from agentdash.spans.models import Span
from runtime.telemetry.attributes import AgentDash
from tests.agentdash.migrations import migrated_back_to

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]  # migrates back and forth

ESCAPED = '{"note": "a\\ud800b\\u0000c", "k\\udfff": 1}'
FIXED = {"note": f"a{REPLACEMENT}b{REPLACEMENT}c", f"k{REPLACEMENT}": 1}
DEEP = {"content": {"parts": [{"function_response": {"response": {}}}]}}
_leaf = DEEP["content"]["parts"][0]["function_response"]["response"]
for _ in range(60):  # a tool result 60 levels deep, as event_data stores it
    _leaf["k"] = {}
    _leaf = _leaf["k"]


def test_the_migrations_mark_as_the_store_marks() -> None:
    assert STORAGE_REPLACED == AgentDash.STORAGE_REPLACED


def test_postgresql_never_stored_such_rows() -> None:
    if connection.vendor != "postgresql":
        return  # SQLite: the next test
    AgentSession.objects.create(id="s1", app_name="app", user_id="u", last_update_time=0)
    with pytest.raises(DataError), connection.cursor() as cursor:
        cursor.execute("UPDATE agent_sessions_agentsession SET state = %s", [ESCAPED])


def test_rows_stored_before_are_made_storable_and_their_pages_open(superuser: User) -> None:
    if connection.vendor != "sqlite":
        return  # PostgreSQL: the test above
    before = (
        ("runs", "0003_processhealth"),
        ("spans", "0002_tables_of_this_app"),
        ("core", "0002_audit_target_id_longer"),
    )
    with (
        migrated_back_to("agent_sessions", "0002_event_html", also=before),
        connection.cursor() as cursor,
    ):
        now = time.time()
        cursor.execute(
            "INSERT INTO agent_sessions_agentsession (id, app_name, user_id, title, state, "
            "version, event_count, created_at, last_update_time) VALUES "
            "('s1', 'app', 'u', 't', %s, 0, 1, '2026-01-01', %s)",
            [ESCAPED, now],
        )
        cursor.execute(
            "INSERT INTO agent_sessions_sessionevent (session_id, seq, event_id, invocation_id, "
            "author, timestamp, version, state_delta_keys, data, html) VALUES "
            "('s1', 1, 'e1', 'i1', 'user', %s, 1, '[]', %s, '')",
            [now, ESCAPED],
        )
        cursor.execute(
            "INSERT INTO agent_sessions_sessionevent (session_id, seq, event_id, invocation_id, "
            "author, timestamp, version, state_delta_keys, data, html) VALUES "
            "('s1', 2, 'e2', 'i1', 'user', %s, 1, '[]', %s, '')",
            [now, json.dumps(DEEP)],
        )
        cursor.execute(
            "INSERT INTO runs_run (session_id, agent_name, invocation_id, status, message, "
            "attempt, worker, created_at, trace_id, error, cancel_requested, cancel_reason) "
            "VALUES ('s1', 'app', 'i1', 'failed', %s, 1, '', '2026-01-01', '', 'x', 0, '')",
            [ESCAPED],
        )
        cursor.execute(
            "INSERT INTO spans_span (trace_id, span_id, parent_span_id, name, kind, start_time, "
            "status, status_message, attributes, events, session_id, seq) VALUES "
            "(%s, %s, '', 'n', 'internal', 1, 'unset', '', %s, '[]', 's1', 0)",
            ["a" * 32, "b" * 16, ESCAPED],
        )
    # Migrated forward again: the rows are clean, and marked as the store marks them.
    assert AgentSession.objects.get(pk="s1").state == FIXED
    event = SessionEvent.objects.get(event_id="e1").data
    assert event == {**FIXED, "custom_metadata": {AgentDash.STORAGE_REPLACED: 3}}
    assert SessionEvent.objects.get(event_id="e2").data == DEEP  # what the store keeps stays
    run = Run.objects.get(invocation_id="i1")
    assert run.message == FIXED
    span = Span.objects.get(span_id="b" * 16)
    assert span.attributes == {**FIXED, AgentDash.STORAGE_REPLACED: 3}
    client = Client(raise_request_exception=False)
    client.force_login(superuser)
    for url in (
        f"/admin/spans/span/{span.pk}/change/",
        f"/admin/runs/run/{run.pk}/change/",
        "/admin/agent_sessions/agentsession/s1/change/",
    ):
        assert client.get(url).status_code == 200, url
