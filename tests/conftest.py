"""Test-wide set-up: where the test database lives.

pytest-django gives SQLite an in-memory test database by default, and separate threads
cannot share one: a ``django_db(transaction=True)`` test whose threads write and read
would see nothing of each other's work. So on SQLite the test database is a file under
``var/``. Its name carries the process id, as does the PostgreSQL one, so that two test runs
in one work tree (or one machine's PostgreSQL) never delete each other's database; each run
removes its own at the end.
"""

from __future__ import annotations

import os
import time
import weakref
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests import cpu_spent

# Servers the tests start (daphne, in a process of its own) serve no OTLP/gRPC unless a test
# asks for it: they all share this machine's port 4317 otherwise. Their environment is this
# process's.
os.environ.setdefault("AGENTDASH_OTLP_GRPC", "off")
# Nor a decoding process for OTLP exports (a Python of its own: a second of CPU to start, in
# each server, and each xdist worker, that ingests): they read exports themselves, as on one
# CPU. The tests of it ask for one (tests/agentdash/ingest/test_decoders.py,
# test_ingest_live.py).
os.environ.setdefault("AGENTDASH_INGEST_DECODE_PROCESSES", "0")


@pytest.fixture(scope="session")
def django_db_modify_db_settings(
    django_db_modify_db_settings_parallel_suffix: None,
) -> Iterator[None]:
    """pytest-django's hook, run just before the test databases are created."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    test = db.setdefault("TEST", {})
    leftovers: list[Path] = []
    # Always this name: pytest-django's suffix for a pytest-xdist worker would make of an SQLite
    # path "test_/…/agentdash.sqlite3_gw0" (our engine is not the one it knows), and each
    # worker is a process of its own, so the process id already keeps them apart.
    if "sqlite" in db["ENGINE"]:
        path = Path(settings.VAR_DIR) / f"test-agentdash-{os.getpid()}.sqlite3"
        test["NAME"] = str(path)
        leftovers = [Path(f"{path}-wal"), Path(f"{path}-shm"), path]
    else:
        test["NAME"] = f"test_{db['NAME']}_{os.getpid()}"
    yield
    for path in leftovers:  # Django removes the database file; WAL files may stay behind
        path.unlink(missing_ok=True)


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: Any) -> Iterator[None]:
    """pytest-django's test database set-up, plus, at the end, on PostgreSQL: end the sessions
    other threads left open (``sync_to_async`` worker threads keep their connections), which
    would otherwise stop the test database from being dropped."""
    yield
    with django_db_blocker.unblock():
        from django.db import connection

        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                    " AND backend_type = 'client backend'"
                )


# ── A transactional test's flush keeps the content types and permissions ───────────────────
# Django empties every table after a test with transaction=True, then sends post_migrate,
# whose handlers make the content types and permissions again (536 such tests in the SQLite
# pass, 176 in the PostgreSQL one). No test makes or removes either, so the flush leaves their
# tables be, and their two handlers, which would only find every row there (~95 ms a flush on
# SQLite, ~130 on PostgreSQL: two queries an app), are not called; the others are (our roles
# and agents' mirror are made again as before). On PostgreSQL the tables are emptied with
# DELETE in one statement string, not TRUNCATE, which makes every table's files anew (0.2–0.5 s
# a flush) for the few rows a test leaves: the foreign keys are deferred and the flush is one
# transaction. A flush: 112 → 27 ms on SQLite, 0.2–0.5 s → 46 ms on PostgreSQL.
KEPT_BY_FLUSH = frozenset({"django_content_type", "auth_permission"})


@pytest.fixture(scope="session", autouse=True)
def _flush_keeps_what_migrate_made() -> None:
    from django.contrib.auth.management import create_permissions
    from django.contrib.contenttypes.management import create_contenttypes
    from django.core.management.commands import flush
    from django.db.models.signals import post_migrate

    def sql_flush(
        style: Any, connection: Any, reset_sequences: bool = True, allow_cascade: bool = False
    ) -> list[str]:
        tables = connection.introspection.django_table_names(
            only_existing=True, include_views=False
        )
        kept = [table for table in tables if table not in KEPT_BY_FLUSH]
        if connection.vendor == "postgresql" and not reset_sequences and not allow_cascade:
            quote = connection.ops.quote_name
            return [" ".join(f"DELETE FROM {quote(table)};" for table in kept)]  # one trip
        return list(
            connection.ops.sql_flush(
                style, kept, reset_sequences=reset_sequences, allow_cascade=allow_cascade
            )
        )

    def emit_post_migrate_signal(*args: Any, **kwargs: Any) -> None:
        with _receivers_left_out(post_migrate, (create_contenttypes, create_permissions)):
            emit(*args, **kwargs)

    emit = flush.emit_post_migrate_signal
    flush.sql_flush = sql_flush  # type: ignore[assignment]
    flush.emit_post_migrate_signal = emit_post_migrate_signal  # type: ignore[assignment]


@contextmanager
def _receivers_left_out(signal: Any, handlers: Collection[Callable[..., Any]]) -> Iterator[None]:
    """``signal`` without the receivers that are ``handlers`` while the block runs."""

    def target(entry: tuple[Any, ...]) -> Any:  # (lookup key, receiver or weak ref, is async)
        receiver = entry[1]
        return receiver() if isinstance(receiver, weakref.ref) else receiver

    kept = signal.receivers
    left_out = [entry for entry in kept if target(entry) in handlers]
    assert len(left_out) == len(handlers), "a kept table's handler is no longer connected"
    with signal.lock:
        signal.receivers = [r for r in kept if r not in left_out]
        signal.sender_receivers_cache.clear()
    try:
        yield
    finally:
        with signal.lock:
            signal.receivers = kept
            signal.sender_receivers_cache.clear()


# ── One directory of database templates for the run (tests/agentdash/live_harness.py) ─────
# Made by the first process (pytest-xdist's workers inherit its environment), removed by it
# at the end: every worker copies the same migrated and seeded files instead of making its own.
_templates_made: list[Path] = []


def _templates_dir_make(config: pytest.Config) -> None:
    from tests.agentdash.live_harness import TEMPLATES_DIR_VAR

    if hasattr(config, "workerinput") or os.environ.get(TEMPLATES_DIR_VAR):
        return
    import tempfile

    made = Path(tempfile.mkdtemp(prefix="agentdash-templates-"))
    _templates_made.append(made)
    os.environ[TEMPLATES_DIR_VAR] = str(made)


def pytest_unconfigure(config: pytest.Config) -> None:
    import shutil

    from tests.agentdash.live_harness import TEMPLATES_DIR_VAR

    for made in _templates_made:
        shutil.rmtree(made, ignore_errors=True)
        os.environ.pop(TEMPLATES_DIR_VAR, None)
    _templates_made.clear()


def _encodable(text: str) -> str:
    """``text`` with lone surrogates written as escapes: hostile strings reach captured logs
    and failure messages, and pytest-xdist's workers send reports as UTF-8."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if call.when == "setup":  # carried to the controller with the report (pytest-xdist)
        shared = _session_fixtures.spent.pop(item.nodeid, 0.0)
        report.user_properties.append((SESSION_SETUP, shared))
    report.sections = [(title, _encodable(text)) for title, text in report.sections]
    if report.longrepr is not None:
        text = str(report.longrepr)
        if _encodable(text) != text:
            report.longrepr = _encodable(text)


# ── The slow marker, kept honest ──────────────────────────────────────────────────────────
# `make test-fast` leaves out the tests marked slow; a test that takes longer than SLOW_S
# (setup, call and teardown) without the marker is named at the end of every run, so the
# marker follows the tests' real cost.
SLOW_S = 2.0
_spent: dict[str, float] = {}
_marked: dict[str, bool] = {}


SESSION_SETUP = "session_fixtures_s"


class _SessionFixtures:
    """Times the session's fixtures (the test database, migrated; a server every test of a
    run shares), made by the set-up of whichever test first asks for one: no test's own
    cost. A plugin, not hooks of this conftest: a session fixture's hooks are the session's,
    which a conftest of a directory below the root is not part of."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}  # test → seconds its set-up spent on them
        self._current: str | None = None  # the test being set up
        self._depth = 0  # session fixtures being made (one asks for another: counted once)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Iterator[None]:
        self._current = item.nodeid
        try:
            yield
        finally:
            self._current = None

    @pytest.hookimpl(hookwrapper=True)
    def pytest_fixture_setup(self, fixturedef: pytest.FixtureDef[Any]) -> Iterator[None]:
        outermost = fixturedef.scope == "session" and self._depth == 0
        self._depth += fixturedef.scope == "session"
        start = time.monotonic()
        try:
            yield
        finally:
            self._depth -= fixturedef.scope == "session"
            if outermost and self._current is not None:
                spent = time.monotonic() - start
                self.spent[self._current] = self.spent.get(self._current, 0.0) + spent


_session_fixtures = _SessionFixtures()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    shared = float(dict(report.user_properties).get(SESSION_SETUP, 0.0))
    spent = max(report.duration - shared, 0.0)
    _spent[report.nodeid] = _spent.get(report.nodeid, 0.0) + spent
    _marked[report.nodeid] = "slow" in report.keywords


def pytest_terminal_summary(terminalreporter: Any) -> None:
    from django.db import connection

    if connection.vendor != "sqlite":
        # `make test-fast` runs on SQLite: what a test costs there is what counts. On
        # PostgreSQL a transactional test's teardown alone (a TRUNCATE of every table) takes
        # 0.4–1 s, and named quick tests slow on every pass.
        return
    unmarked = sorted(
        ((spent, nodeid) for nodeid, spent in _spent.items() if spent > SLOW_S),
        reverse=True,
    )
    unmarked = [(spent, nodeid) for spent, nodeid in unmarked if not _marked.get(nodeid)]
    if not unmarked:
        return
    terminalreporter.section("slow tests without the slow marker")
    terminalreporter.line(
        f"{len(unmarked)} took over {SLOW_S:.0f} s and `make test-fast` runs them: mark them"
        " slow (pytest.mark.slow), or make them faster"
    )
    for spent, nodeid in unmarked[:30]:
        terminalreporter.line(f"{spent:7.2f} s  {nodeid}")


# ── Spreading the tests over processes (pytest-xdist, `--dist loadfile`) ──────────────────
# Each module is a unit of work (its tests in one process: its module-scoped servers start
# once), but the browser tests are one unit, first in the queue: two Chromiums at once slow
# each other more than they gain (measured with three workers: the SQLite pass took 520 s
# with the hostile corpus's module a unit of its own, 456 s without; and with four workers,
# the browser tests in two units, `make test` took 550 s against 528 s; with three, the
# PostgreSQL pass beside, 513 s against 492 s). (A scheduler of ours:
# `xdist_group` marks do nothing under pytest 9, whose node ids pytest-xdist 3.8 can no
# longer rename.)
BROWSER_TESTS = "tests/agentdash/dashboard/browser/"
# Modules with no fixture wider than a test, and long enough to hold a pass up at its end alone
# (the hostile admin: ~50 s in each pass): a unit per test function, with its parameters.
SPREAD_MODULES = {"tests/agentdash/test_hostile_admin.py"}


def _in_browser_tests(nodeid: str) -> bool:
    return nodeid.startswith(BROWSER_TESTS)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModulesAndTheBrowser(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _unit_of(nodeid)

    return ModulesAndTheBrowser(config, log)


def _django_order(item: pytest.Item) -> int:
    """pytest-django's order of a test (as Django orders them): 0 with a database rolled back,
    1 transactional (the database flushed after it, its migrations' rows gone), 2 none."""
    marker = item.get_closest_marker("django_db")
    fixtures = getattr(item, "fixturenames", ())
    if (marker and (marker.kwargs.get("transaction") or marker.kwargs.get("reset_sequences"))) or (
        "transactional_db" in fixtures or "live_server" in fixtures
    ):
        return 1
    return 0 if marker or "db" in fixtures else 2


def _unit_of(nodeid: str) -> str:
    """The unit of work a test belongs to (``ModulesAndTheBrowser``)."""
    if _in_browser_tests(nodeid):
        return "browser"
    module, _, test = nodeid.partition("::")
    if module in SPREAD_MODULES:
        return f"{module}::{test.split('[', 1)[0]}"
    return module


class _LongestFirst:
    """Orders the queue of work once every other plugin has ordered the items: the browser
    tests first, keeping Django's order for the rest (tests rolled back, then transactional
    ones, whose flush removes their migrations' rows, then those with no database). In a run
    without the browser tests (the PostgreSQL pass), the units holding a test marked ``slow``
    (the marker is enforced: over 2 s) go first in each of those parts, so that a long unit
    does not start last and hold the pass up alone: a killed worker's recovery, ~20 s, had
    ended the PostgreSQL pass alone (113 s → 94 s measured here).

    Not in a run with the browser tests: they are its end, and the SQLite pass took longer
    with the slow units first (518–571 s in four runs, against 456–503 s in four): the
    browser tests then shared the cores with the units of most work instead of the ones that
    mostly wait."""

    @pytest.hookimpl(hookwrapper=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> Iterator[None]:
        yield
        browser = any(_in_browser_tests(item.nodeid) for item in items)
        slow = (
            set()
            if browser
            else {_unit_of(i.nodeid) for i in items if i.get_closest_marker("slow")}
        )

        def place(item: pytest.Item) -> tuple[int, int, int]:
            unit = _unit_of(item.nodeid)
            if unit == "browser":
                return (0, 0, 0)
            if not slow:
                return (1, 0, 0)  # the order the other plugins left
            return (1, _django_order(item), 0 if unit in slow else 1)

        items.sort(key=place)  # stable: a unit's tests keep their order


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_LongestFirst(), "agentdash-longest-first")
    config.pluginmanager.register(_session_fixtures, "agentdash-session-fixtures")
    _templates_dir_make(config)
    cpu_spent.register(config)  # AGENTDASH_TEST_CPU=DIR: CPU by module (tests/cpu_spent.py)
