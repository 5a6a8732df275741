"""The test database is one that threads can really share.

pytest-django's default SQLite test database is in memory, in SQLite's shared-cache mode:
threads see one another's rows, but under table locks, not WAL: a reader meets "database
table is locked" while another thread holds a write transaction, and busy_timeout does not
help. tests/conftest.py puts the test database in a file instead; these tests pin that down
(and hold on PostgreSQL too).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
from django.contrib.auth.models import Group
from django.db import connection, connections, transaction


def test_the_sqlite_test_database_is_a_file() -> None:
    name = connection.settings_dict["TEST"]["NAME"]
    assert name
    if connection.vendor == "sqlite":
        assert ":memory:" not in name and "mode=memory" not in name


def run_threads(*targets: Callable[[], None]) -> list[str]:
    """Run each target in its own thread (closing its connections after); their errors."""
    errors: list[str] = []

    def wrap(target: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                target()
            except Exception as exc:
                errors.append(f"{target.__name__}: {exc!r}")
            finally:
                connections.close_all()  # an open connection would stop the DB's teardown

        return run

    threads = [threading.Thread(target=wrap(t)) for t in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    return errors


@pytest.mark.django_db(transaction=True)
def test_a_reader_thread_reads_while_a_writer_thread_holds_a_transaction() -> None:
    inserted, read = threading.Event(), threading.Event()
    seen: dict[str, list[str]] = {}

    def writer() -> None:
        with transaction.atomic():
            Group.objects.create(name="from-writer")
            inserted.set()
            assert read.wait(timeout=10), "the reader never read"

    def reader() -> None:
        try:
            assert inserted.wait(timeout=10), "the writer never wrote"
            seen["during"] = list(Group.objects.values_list("name", flat=True))
        finally:
            read.set()

    assert run_threads(writer, reader) == []
    assert "from-writer" not in seen["during"]  # not committed yet: not visible
    assert Group.objects.filter(name="from-writer").exists()  # committed: visible to all


@pytest.mark.django_db(transaction=True)
def test_writer_threads_queue_instead_of_failing() -> None:
    def writer(n: int) -> Callable[[], None]:
        def write() -> None:
            with transaction.atomic():
                Group.objects.create(name=f"writer-{n}")
                time.sleep(0.05)  # hold the write lock a while

        write.__name__ = f"writer_{n}"
        return write

    assert run_threads(*(writer(n) for n in range(4))) == []
    assert Group.objects.filter(name__startswith="writer-").count() == 4


@pytest.mark.django_db(transaction=True)
def test_the_flush_after_a_transactional_test_empties_every_table_but_the_kept_two() -> None:
    from django.contrib.auth.models import Permission
    from django.contrib.contenttypes.models import ContentType
    from django.core.management import call_command

    from agentdash.agent_sessions.models import AgentSession, SessionEvent
    from agentdash.core.permissions import OPERATORS_GROUP
    from tests.agentdash.stored import session_make, store_event
    from tests.conftest import KEPT_BY_FLUSH

    session_make("flushed")  # and rows that point at it: the foreign keys are deferred
    store_event("flushed")
    store_event("flushed")
    Group.objects.create(name="flushed")
    kept = ContentType.objects.count(), Permission.objects.count()
    tables = connection.introspection.django_table_names(only_existing=True, include_views=False)

    def rows(table: str) -> int:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT COUNT(*) FROM {connection.ops.quote_name(table)}")
            return int(cursor.fetchone()[0])

    assert sum(rows(t) for t in tables if t not in KEPT_BY_FLUSH) > 3
    # as Django's TransactionTestCase flushes after each such test
    call_command("flush", verbosity=0, interactive=False, reset_sequences=False)
    left = {t: rows(t) for t in tables if t not in KEPT_BY_FLUSH}
    # post_migrate's handlers make the roles and the agents' mirror again
    made_again = {"auth_group", "auth_group_permissions", "registry_agentrecord"}
    assert not {t: n for t, n in left.items() if n and t not in made_again}
    assert not Group.objects.filter(name="flushed").exists()
    assert not AgentSession.objects.exists() and not SessionEvent.objects.exists()
    assert (ContentType.objects.count(), Permission.objects.count()) == kept
    assert Group.objects.get(name=OPERATORS_GROUP).permissions.exists()  # made again
