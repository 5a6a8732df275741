"""Fixtures for the Django tests: one user per role.

- ``alice`` and ``bob``: plain users (chat, see their own sessions);
- ``operator_user``: in the Operators group, not staff (sees everything, changes controls,
  no Django admin);
- ``staff_operator``: an operator who is also staff (Django admin, limited to the operator
  permissions);
- ``superuser``: everything.

``role_users`` maps the role names used by the authorization matrix to these users
(``anonymous`` → None). A module of many tests on the same rows makes them once with
:func:`made_once` (the rows of one transaction that each test's own nests in). ``live``:
this process's live pipeline, flushing on the test's loop.
``make_session(id)``: a stored session of nobody's.

Passwords are hashed with MD5 in tests: PBKDF2's deliberate slowness (~0.3 s a user) would
cost minutes over the authorization matrix and buys a test nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from django.contrib.auth.models import Group, User
from django.db import transaction
from django.test import override_settings

from agentdash.agent_sessions.models import AgentSession
from agentdash.core.permissions import OPERATORS_GROUP
from agentdash.core.services import roles_ensure
from agentdash.live.pipeline import LivePipeline, live_pipeline
from tests.agentdash.recording_executor import RecordingExecutor
from tests.agentdash.stored import session_make

PASSWORD = "correct-horse-battery-staple-42"

# The modules about the database itself — row locks and claims, sequence numbers, upserts and
# versions, JSON search, migrations, outages, hostile strings stored (PostgreSQL refuses NUL):
# marked ``database``, so `make test` runs them a second time on PostgreSQL. Every other Django
# test runs once, on SQLite: they use the ORM the same way on both.
DATABASE_MODULES = frozenset(
    {
        "agent_sessions/test_artifact_service.py",
        "agent_sessions/test_concurrency.py",
        "agent_sessions/test_forks.py",
        "agent_sessions/test_memory_service.py",
        "agent_sessions/test_session_service_contract.py",
        "agent_sessions/test_sessions_list_migration.py",
        "agent_sessions/test_state_update.py",
        "agent_sessions/test_tool_confirmation_stored.py",
        "changes/test_bulk.py",
        "changes/test_items.py",
        "changes/test_migrations.py",
        "changes/test_services.py",
        "controls/test_policy_services.py",
        "core/test_database_unavailable.py",
        "core/test_postgres_pool.py",
        "core/test_outages.py",
        "core/test_prepared.py",
        "core/test_test_database.py",
        "dashboard/test_export.py",
        "dashboard/test_session_list.py",
        "dashboard/test_span_search.py",
        "evals/test_keep_and_run.py",
        "ingest/test_otlp_ingest.py",
        "live/test_hostile_data.py",
        "live/test_order_promise.py",
        "live/test_pipeline.py",
        "live/test_told_flush.py",
        "runs/test_confirmations.py",
        "runs/test_enqueue.py",
        "runs/test_lifecycle.py",
        "runs/test_paused_run_recovery.py",
        "runs/test_read_ahead.py",
        "runs/test_reaper.py",
        "runs/test_run_cancel.py",
        "runs/test_session_lifecycle.py",
        "runs/test_turns.py",
        "runs/test_worker.py",
        "runs/test_worker_recovery.py",
        "spans/test_prices.py",
        "spans/test_span_upsert.py",
        "spans/test_span_version.py",
        "spans/test_summary_parity.py",
        "spans/test_spans_store.py",
        "spans/test_usage.py",
        "spans/test_usage_migration.py",
        "test_hostile_admin.py",
        "test_stored_strings_migration.py",
    }
)
HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests of ``DATABASE_MODULES``; a name there that is no module is an error (a
    renamed module would otherwise leave the PostgreSQL pass without it, silently)."""
    missing = sorted(name for name in DATABASE_MODULES if not (HERE / name).is_file())
    if missing:
        raise pytest.UsageError(f"DATABASE_MODULES names no such module: {', '.join(missing)}")
    for item in items:
        path = Path(item.path)
        if item.get_closest_marker("sqlite_only"):
            continue  # what PostgreSQL cannot hold: the PostgreSQL pass leaves it out
        if path.is_relative_to(HERE) and path.relative_to(HERE).as_posix() in DATABASE_MODULES:
            item.add_marker(pytest.mark.database)


ROLES = ("anonymous", "alice", "operator", "staff_operator", "superuser")


FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
Made = TypeVar("Made")


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    settings.PASSWORD_HASHERS = FAST_HASHERS


def made_once(django_db_blocker: Any, make: Callable[[], Made]) -> Iterator[Made]:
    """For a module-scoped fixture: what ``make()`` writes, made once for the module's tests
    (yields what it returned). The rows are made in a transaction that stays open while the
    module runs and is rolled back at its end; each ``django_db`` test's own transaction
    nests in it (pytest-django leaves a higher-scoped transaction be), so what a test writes
    is undone after it and the shared rows are there for the next. Only for tests on this
    thread's connection, and never ``transaction=True`` ones: they flush the tables."""
    with django_db_blocker.unblock():
        outer = transaction.atomic()
        outer.__enter__()
        try:
            with override_settings(PASSWORD_HASHERS=FAST_HASHERS):
                made = make()
        except BaseException as exc:
            outer.__exit__(type(exc), exc, exc.__traceback__)
            raise
    try:
        yield made
    finally:
        with django_db_blocker.unblock():
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


@pytest.fixture
def operators_group(db: None) -> Group:
    roles_ensure()
    return Group.objects.get(name=OPERATORS_GROUP)


def alice_make() -> User:
    return User.objects.create_user("alice", "alice@example.com", PASSWORD)


def operator_make(username: str, *, staff: bool = False) -> User:
    """An operator (in the Operators group; staff: the Django admin too)."""
    roles_ensure()
    user = User.objects.create_user(username, f"{username}@example.com", PASSWORD, is_staff=staff)
    user.groups.add(Group.objects.get(name=OPERATORS_GROUP))
    return user


def superuser_make() -> User:
    return User.objects.create_superuser("admin", "admin@example.com", PASSWORD)


def role_users_make() -> dict[str, User | None]:
    """The users of :func:`role_users`, made."""
    return role_users_of(
        alice_make(), operator_make("operator"), operator_make("staffop", staff=True),
        superuser_make(),
    )  # fmt: skip


@pytest.fixture
def alice(db: None) -> User:
    return alice_make()


@pytest.fixture
def bob(db: None) -> User:
    return User.objects.create_user("bob", "bob@example.com", PASSWORD)


@pytest.fixture
def operator_user(db: None) -> User:
    return operator_make("operator")


@pytest.fixture
def staff_operator(db: None) -> User:
    return operator_make("staffop", staff=True)


@pytest.fixture
def superuser(db: None) -> User:
    return superuser_make()


@pytest.fixture
def role_users(
    alice: User, operator_user: User, staff_operator: User, superuser: User
) -> dict[str, User | None]:
    return role_users_of(alice, operator_user, staff_operator, superuser)


def role_users_of(
    alice: User, operator: User, staff_operator: User, superuser: User
) -> dict[str, User | None]:
    """The authorization matrix's roles (:data:`ROLES`), each a user (anonymous: None)."""
    return {
        "anonymous": None,
        "alice": alice,
        "operator": operator,
        "staff_operator": staff_operator,
        "superuser": superuser,
    }


@pytest.fixture
def make_session(db: None) -> Callable[[str], AgentSession]:
    return session_make


@pytest.fixture
def recorder() -> Iterator[RecordingExecutor]:
    """This process's executor replaced by one that records run ids and runs nothing."""
    from agentdash.runs import executors

    found = RecordingExecutor()
    executors.executor_set(found)
    yield found
    executors.executor_set(None)


@pytest.fixture
async def live(transactional_db: None) -> AsyncIterator[LivePipeline]:
    """This process's pipeline, installed and flushing on the test's loop; stopped (flushed)
    and made inert after the test."""
    pipeline = live_pipeline()
    pipeline.uninstall()  # nothing left over from earlier tests (their pokes, their sessions)
    pipeline.install().start()
    yield pipeline
    await pipeline.stop()
    pipeline.uninstall()
