"""Per-session change seqs: contiguous and unique, also with concurrent writers."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import connection
from django.db.models import Max

from agentdash.agent_sessions.models import AgentSession
from agentdash.timeline import services
from agentdash.timeline.models import SessionChange
from agentdash.timeline.selectors import changes_after, session_last_seq
from agentdash.timeline.services import session_change_next

MakeSession = Callable[[str], AgentSession]


@pytest.mark.django_db
def test_seqs_count_up_per_session(make_session: MakeSession) -> None:
    make_session("s1")
    make_session("s2")
    assert [session_change_next(session_id="s1", kind="event", ref=f"e{i}") for i in range(3)] == [
        1,
        2,
        3,
    ]
    assert session_change_next(session_id="s2", kind="run", ref="7") == 1
    assert session_last_seq(session_id="s1") == 3
    assert session_last_seq(session_id="nope") == 0
    after = changes_after(session_id="s1", seq=1)
    assert [(c.seq, c.kind, c.ref) for c in after] == [(2, "event", "e1"), (3, "event", "e2")]
    assert [c.seq for c in changes_after(session_id="s1", seq=0, limit=2)] == [1, 2]
    assert list(changes_after(session_id="s1", seq=3)) == []


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_get_contiguous_unique_seqs(make_session: MakeSession) -> None:
    make_session("busy")
    threads, per_thread = 6, 15
    got: list[int] = []
    errors: list[BaseException] = []
    start = threading.Barrier(threads)
    lock = threading.Lock()

    def write(n: int) -> None:
        try:
            start.wait()
            for i in range(per_thread):
                seq = session_change_next(session_id="busy", kind="span", ref=f"{n}:{i}")
                with lock:
                    got.append(seq)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()  # each thread has its own connection

    workers = [threading.Thread(target=write, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert not errors, errors
    total = threads * per_thread
    assert sorted(got) == list(range(1, total + 1))
    stored = list(SessionChange.objects.filter(session_id="busy").values_list("seq", "ref"))
    assert sorted(seq for seq, _ in stored) == list(range(1, total + 1))
    assert len({ref for _, ref in stored}) == total


@pytest.mark.django_db
def test_a_writer_that_lost_the_race_retries(
    make_session: MakeSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As on PostgreSQL when another transaction committed the same seq after our max()."""
    make_session("s1")
    for i in range(3):
        session_change_next(session_id="s1", kind="event", ref=f"e{i}")
    reads = []

    def stale_then_fresh(field: str) -> Max:
        reads.append(field)
        return Max(field) - 1 if len(reads) == 1 else Max(field)

    monkeypatch.setattr(services, "Max", stale_then_fresh)
    assert session_change_next(session_id="s1", kind="event", ref="late") == 4
    assert len(reads) == 2
    assert list(SessionChange.objects.values_list("seq", flat=True)) == [1, 2, 3, 4]


@pytest.mark.django_db
def test_retries_are_bounded(make_session: MakeSession, monkeypatch: pytest.MonkeyPatch) -> None:
    make_session("s1")
    session_change_next(session_id="s1", kind="event", ref="e")
    monkeypatch.setattr(services, "Max", lambda field: Max(field) - 1)  # always stale
    with pytest.raises(services.SeqAllocationError, match="after 20 attempts"):
        session_change_next(session_id="s1", kind="event", ref="never")
    assert SessionChange.objects.count() == 1
