"""Concurrent writers through separate live sessions lose no update (threads, processes, and
lost compare-and-swaps forced deterministically)."""

from __future__ import annotations

import itertools
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agentdash.agent_sessions import _state_store
from agentdash.agent_sessions.errors import ConcurrentUpdateError
from agentdash.agent_sessions.models import AgentSession, AppState, SessionEvent, UserState
from agentdash.agent_sessions.session_service import DjangoSessionService
from runtime.events import Event, EventActions

pytestmark = pytest.mark.django_db(transaction=True)

REPO = Path(__file__).resolve().parents[3]
WRITER = "tests.agentdash.agent_sessions._writer_process"


def event(author: str = "agent", **delta: Any) -> Event:
    return Event(
        author=author, invocation_id=f"inv-{author}", actions=EventActions(state_delta=delta)
    )


def run_in_threads(target: Callable[[int], None], count: int) -> None:
    """Run ``target(n)`` for n in range(count) in threads released together; re-raise."""
    errors: list[BaseException] = []
    start = threading.Barrier(count)

    def run(n: int) -> None:
        try:
            start.wait()
            target(n)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()  # this thread's own connection

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors


def assert_contiguous(session_id: str, total: int) -> None:
    row = AgentSession.objects.get(pk=session_id)
    assert (row.event_count, row.version) == (total, total)
    stored = list(
        SessionEvent.objects.filter(session_id=session_id)
        .order_by("seq")
        .values_list("seq", "version")
    )
    assert [seq for seq, _ in stored] == list(range(1, total + 1))
    versions = [version for _, version in stored]
    assert all(a < b for a, b in itertools.pairwise(versions))


def test_the_test_database_is_a_file_threads_can_share() -> None:
    assert "mode=memory" not in str(connection.settings_dict["NAME"])


def test_threads_appending_to_one_session_lose_no_update(service: DjangoSessionService) -> None:
    s = service.create_session(app_name="app", user_id="u")
    writers, per_writer = 6, 15

    def writer(n: int) -> None:
        live = service.get_session(app_name="app", user_id="u", session_id=s.id)
        assert live is not None
        for i in range(per_writer):
            delta = {f"w{n}.{i}": i, f"user:w{n}": i, f"app:w{n}": i}
            service.append_event(live, event(f"agent{n}", **delta))

    run_in_threads(writer, writers)

    got = service.get_session(app_name="app", user_id="u", session_id=s.id)
    assert got is not None
    expected = {f"w{n}.{i}": i for n in range(writers) for i in range(per_writer)}
    expected |= {f"user:w{n}": per_writer - 1 for n in range(writers)}
    expected |= {f"app:w{n}": per_writer - 1 for n in range(writers)}
    assert got.state == expected
    assert_contiguous(s.id, writers * per_writer)
    for n in range(writers):  # each writer's events in the order it wrote them
        mine = [e.actions.state_delta for e in got.events if e.author == f"agent{n}"]
        assert [d[f"user:w{n}"] for d in mine] == list(range(per_writer))
    assert UserState.objects.get(app_name="app", user_id="u").version == writers * per_writer


def test_two_threads_incrementing_disjoint_keys(service: DjangoSessionService) -> None:
    s = service.create_session(app_name="app", user_id="u", state={"a": 0, "b": 0})
    rounds = 40

    def increment(n: int) -> None:
        key = "ab"[n]
        live = service.get_session(app_name="app", user_id="u", session_id=s.id)
        assert live is not None
        for _ in range(rounds):
            service.append_event(live, event(f"counter-{key}", **{key: live.state[key] + 1}))

    run_in_threads(increment, 2)
    got = service.get_session(app_name="app", user_id="u", session_id=s.id)
    assert got is not None and got.state == {"a": rounds, "b": rounds}
    assert_contiguous(s.id, 2 * rounds)


@pytest.mark.slow
def test_processes_appending_to_one_session_lose_no_update(
    service: DjangoSessionService,
) -> None:
    database = str(connection.settings_dict["NAME"])
    s = service.create_session(app_name="app", user_id="u")
    writers, per_writer = 3, 20
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", WRITER, database, s.id, str(n), str(per_writer)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(writers)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    got = service.get_session(app_name="app", user_id="u", session_id=s.id)
    assert got is not None
    expected = {f"p{n}.{i}": i for n in range(writers) for i in range(per_writer)}
    expected |= {f"user:p{n}": per_writer - 1 for n in range(writers)}
    assert got.state == expected
    assert_contiguous(s.id, writers * per_writer)


def test_a_lost_swap_is_retried_on_the_fresh_row(
    service: DjangoSessionService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read version 0, a rival commits version 1, our swap on version 0 matches no row: the
    write is redone on the fresh row and keeps the rival's key."""
    s = service.create_session(app_name="app", user_id="u", state={"x": 0})
    live = service.get_session(app_name="app", user_id="u", session_id=s.id)
    assert live is not None
    real_read = _state_store._read_session
    stale = real_read(s.id, "app", "u")
    rival = service.get_session(app_name="app", user_id="u", session_id=s.id)
    assert rival is not None
    service.append_event(rival, event("rival", rival=1))
    seen: list[int] = []

    def read(*args: Any) -> Any:
        row = stale if not seen else real_read(*args)
        seen.append(row["version"])
        return row

    monkeypatch.setattr(_state_store, "_read_session", read)
    service.append_event(live, event("agent", mine=1))

    assert seen == [0, 1]
    got = service.get_session(app_name="app", user_id="u", session_id=s.id)
    assert got is not None
    assert got.state == {"x": 0, "rival": 1, "mine": 1}
    assert [e.author for e in got.events] == ["rival", "agent"]
    assert live.state == {"x": 0, "rival": 1, "mine": 1}  # refreshed in place
    assert_contiguous(s.id, 2)


def test_a_redo_reads_for_no_key_update_so_it_cannot_lose_again(
    service: DjangoSessionService, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = service.create_session(app_name="app", user_id="u")
    real_read = _state_store._read_session
    stale = real_read(s.id, "app", "u")
    service.append_event(s, event("rival", rival=1))
    locks: list[bool] = []

    def read(session_id: str, app: Any, user: Any, lock: bool = False) -> Any:
        locks.append(lock)
        return stale if len(locks) == 1 else real_read(session_id, app, user, lock)

    monkeypatch.setattr(_state_store, "_read_session", read)
    with CaptureQueriesContext(connection) as queries:
        service.append_event(s, event("agent", **{"mine": 1, "user:k": 1}))
    assert locks == [False, True]
    if connection.features.has_select_for_update:  # PostgreSQL; SQLite locks at BEGIN
        locked = [q["sql"] for q in queries.captured_queries if "FOR NO KEY UPDATE" in q["sql"]]
        assert any("agent_sessions_userstate" in q for q in locked), locked


def test_many_writers_on_one_session_and_shared_rows_all_get_through(
    service: DjangoSessionService,
) -> None:
    sessions = [service.create_session(app_name="app", user_id="u") for _ in range(2)]
    writers, per_writer = 16, 4

    def writer(n: int) -> None:
        live = service.get_session(app_name="app", user_id="u", session_id=sessions[n % 2].id)
        assert live is not None
        for i in range(per_writer):
            delta = {f"w{n}.{i}": i, "user:last": n, f"app:w{n}": i}
            service.append_event(live, event(f"agent{n}", **delta))

    run_in_threads(writer, writers)
    for k, s in enumerate(sessions):
        got = service.get_session(app_name="app", user_id="u", session_id=s.id)
        assert got is not None
        own = {key for key in got.state if not key.startswith(("user:", "app:"))}
        mine = range(k, writers, 2)
        assert own == {f"w{n}.{i}" for n in mine for i in range(per_writer)}
        assert_contiguous(s.id, len(mine) * per_writer)
    assert UserState.objects.get().version == writers * per_writer
    assert AppState.objects.get().state == {f"app:w{n}": per_writer - 1 for n in range(writers)}


def test_a_lost_swap_on_shared_state_redoes_the_whole_write(
    service: DjangoSessionService, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = service.create_session(app_name="app", user_id="u", state={"user:a": 1})
    other = service.create_session(app_name="app", user_id="u")
    real_read = _state_store._scope_read
    stale = real_read(UserState, {"app_name": "app", "user_id": "u"}, False)
    service.append_event(other, event("other", **{"user:b": 2}))
    calls: list[type] = []

    def read(model: type, lookup: dict[str, str], create: bool, lock: bool = False) -> Any:
        calls.append(model)
        if model is UserState and calls.count(UserState) == 1:
            return stale
        return real_read(model, lookup, create, lock)

    monkeypatch.setattr(_state_store, "_scope_read", read)
    service.append_event(s, event("agent", **{"user:c": 3, "own": 1}))

    assert calls.count(UserState) == 2
    assert UserState.objects.get(app_name="app", user_id="u").state == {
        "user:a": 1,
        "user:b": 2,
        "user:c": 3,
    }
    assert_contiguous(s.id, 1)  # the first attempt's event was rolled back with it


def test_endless_contention_ends_in_a_clear_error_and_writes_nothing(
    service: DjangoSessionService, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = service.create_session(app_name="app", user_id="u")
    stale = _state_store._read_session(s.id, "app", "u")
    service.append_event(s, event("rival", rival=1))
    monkeypatch.setattr(_state_store, "_read_session", lambda *args: stale)
    live = service.get_session(app_name="app", user_id="u", session_id=s.id)
    assert live is not None

    with pytest.raises(ConcurrentUpdateError, match="compare-and-swap"):
        service.append_event(live, event("agent", mine=1))
    assert_contiguous(s.id, 1)
    assert "mine" not in AgentSession.objects.get(pk=s.id).state
    assert "mine" not in live.state and len(live.events) == 1  # the live session is untouched
