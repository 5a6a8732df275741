"""A database migrated before the change log and the span store left the former ``timeline``
app upgrades in place: its ``timeline`` migrations stand for the new apps' first ones, the
tables are renamed, the rows stay, and permissions granted on the models follow them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.contrib.auth.models import Permission, User
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.recorder import MigrationRecorder

from agentdash.agent_sessions.models import AgentSession
from agentdash.changes.models import SessionChange, SessionSeq
from agentdash.changes.services import session_change_next
from agentdash.spans.models import Span

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]  # migrates back and forth

OLD = ("0001_initial", "0002_session_seq", "0003_change_kinds")


def tables() -> set[str]:
    return set(connection.introspection.table_names())


@pytest.fixture
def before_the_move() -> Iterator[MigrationRecorder]:
    """The database as the ``timeline`` app left it: its tables, its migrations recorded."""
    executor = MigrationExecutor(connection)
    executor.migrate([("changes", "0003_change_kinds"), ("spans", "0001_initial")])
    recorder = MigrationRecorder(connection)
    for name in OLD:
        recorder.record_unapplied("changes", name)
        recorder.record_applied("timeline", name)
    recorder.record_unapplied("spans", "0001_initial")
    yield recorder
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def test_an_old_database_upgrades_in_place(before_the_move: MigrationRecorder, alice: User) -> None:
    assert {"timeline_sessionchange", "timeline_sessionseq", "timeline_span"} <= tables()
    assert ContentType.objects.filter(app_label="timeline").count() == 3
    AgentSession.objects.create(id="old", app_name="app", user_id="u", last_update_time=0)
    with connection.cursor() as cursor:  # the old tables have no model any more
        cursor.execute(
            "INSERT INTO timeline_sessionchange (session_id, seq, kind, ref, at)"
            " VALUES ('old', 1, 'event', 'e1', CURRENT_TIMESTAMP)"
        )
        cursor.execute("INSERT INTO timeline_sessionseq (session_id, last_seq) VALUES ('old', 1)")
        cursor.execute(
            "INSERT INTO timeline_span (trace_id, span_id, parent_span_id, name, kind,"
            " start_time, status, status_message, attributes, events, seq, session_id)"
            " VALUES ('t', 's', '', 'old span', 'internal', 1, 'unset', '', '{}', '[]', 0, 'old')"
        )
    granted = Permission.objects.get(content_type__app_label="timeline", codename="view_span")
    alice.user_permissions.add(granted)

    executor = MigrationExecutor(connection)
    assert ("changes", "0003_change_kinds") in executor.loader.applied_migrations
    executor.migrate(executor.loader.graph.leaf_nodes())

    assert not {t for t in tables() if t.startswith("timeline_")}
    assert list(SessionChange.objects.values_list("session_id", "seq", "ref")) == [("old", 1, "e1")]
    assert SessionSeq.objects.get(pk="old").last_seq == 1
    assert Span.objects.get().name == "old span"
    assert session_change_next(session_id="old", kind="event", ref="e2") == 2
    assert not ContentType.objects.filter(app_label="timeline").exists()
    assert User.objects.get(pk=alice.pk).has_perm("spans.view_span")
    # Django tracks a replacing migration by the ones it replaces (on a new database too).
    recorded = set(MigrationRecorder(connection).applied_migrations())
    assert {("timeline", name) for name in OLD} <= recorded
