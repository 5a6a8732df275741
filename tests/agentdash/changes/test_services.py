"""Per-session change seqs: contiguous and unique, also with concurrent writers."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import connection, transaction

from agentdash.agent_sessions.models import AgentSession
from agentdash.changes import services
from agentdash.changes.models import SessionChange, SessionSeq
from agentdash.changes.selectors import changes_after, session_last_seq
from agentdash.changes.services import session_change_next
from tests.agentdash.migrations import migrated_back_to

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
def test_seqs_are_taken_for_many_sessions_at_once_and_given_back(
    make_session: MakeSession,
) -> None:
    for name in ("a", "b"):
        make_session(name)
    session_change_next(session_id="a", kind="event", ref="e")
    with transaction.atomic():
        assert services.seqs_take({"b": 3, "a": 2, "c-none": 0}) == {"a": 2, "b": 1}
        services.seqs_give_back({"b": 1})
    assert dict(SessionSeq.objects.values_list("session_id", "last_seq")) == {"a": 3, "b": 2}
    with transaction.atomic():
        assert services.seqs_take({"b": 1}) == {"b": 3}  # the seq given back, taken again
        transaction.set_rollback(True)
    assert SessionSeq.objects.get(pk="b").last_seq == 2  # a rolled-back take leaves no gap


@pytest.mark.django_db
def test_changes_written_around_the_counter_bring_it_back_in_line(
    make_session: MakeSession,
) -> None:
    make_session("s1")
    for i in range(3):
        session_change_next(session_id="s1", kind="event", ref=f"e{i}")
    SessionSeq.objects.filter(pk="s1").update(last_seq=1)  # as if seqs 2, 3 bypassed it
    assert session_change_next(session_id="s1", kind="event", ref="late") == 4
    assert list(SessionChange.objects.values_list("seq", flat=True)) == [1, 2, 3, 4]
    assert SessionSeq.objects.get(pk="s1").last_seq == 4


@pytest.mark.django_db
def test_many_sessions_changes_are_recorded_in_two_statements(make_session: MakeSession) -> None:
    from django.test.utils import CaptureQueriesContext

    for name in ("s1", "s2", "s3"):
        make_session(name)
    session_change_next(session_id="s2", kind="event", ref="e0")
    refs = [("s1", "r1"), ("s2", "r2"), ("s1", "r3"), ("s3", "r4")]
    with CaptureQueriesContext(connection) as queries:
        seqs = services.session_changes_next(kind="run", refs=refs, announce=False)
    assert seqs == [1, 2, 2, 1]  # each session's in the order given, after what it had
    found = SessionChange.objects.filter(kind="run").order_by("session_id", "seq")
    assert [(c.session_id, c.seq, c.ref) for c in found] == [
        ("s1", 1, "r1"),
        ("s1", 2, "r3"),
        ("s2", 2, "r2"),
        ("s3", 1, "r4"),
    ]
    writes = [q["sql"] for q in queries.captured_queries if "INSERT" in q["sql"]]
    assert len(writes) == 2, writes


@pytest.mark.django_db
def test_many_changes_recorded_around_the_counter_are_recorded_one_by_one(
    make_session: MakeSession,
) -> None:
    make_session("s1")
    make_session("s2")
    for i in range(3):
        session_change_next(session_id="s1", kind="event", ref=f"e{i}")
    SessionSeq.objects.filter(pk="s1").update(last_seq=1)  # as if seqs 2, 3 bypassed it
    seqs = services.session_changes_next(kind="run", refs=[("s1", "a"), ("s2", "b")])
    assert seqs == [4, 1]
    assert list(SessionChange.objects.filter(session_id="s1").values_list("seq", flat=True)) == [
        1,
        2,
        3,
        4,
    ]


@pytest.mark.django_db
def test_a_counter_that_cannot_be_mended_is_a_clear_error(
    make_session: MakeSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_session("s1")
    session_change_next(session_id="s1", kind="event", ref="e1")
    session_change_next(session_id="s1", kind="event", ref="e2")
    SessionSeq.objects.filter(pk="s1").update(last_seq=0)  # both tries find their seq taken
    monkeypatch.setattr(services, "seq_resync", lambda session_id: None)
    with pytest.raises(services.SeqAllocationError, match="its next seq is taken"):
        session_change_next(session_id="s1", kind="event", ref="never")
    assert list(SessionChange.objects.values_list("ref", flat=True).order_by("seq")) == [
        "e1",
        "e2",
    ]


@pytest.mark.django_db(transaction=True)
def test_the_migration_starts_each_counter_at_the_sessions_highest_seq() -> None:
    with migrated_back_to("changes", "0001_initial") as old:
        Session = old.get_model("agent_sessions", "AgentSession")
        Change = old.get_model("changes", "SessionChange")
        for name, seqs in (("busy", 5), ("quiet", 0)):
            Session.objects.create(id=name, app_name="app", user_id="u", last_update_time=0)
            for seq in range(1, seqs + 1):
                Change.objects.create(session_id=name, seq=seq, kind="event", ref=f"e{seq}")
    assert dict(SessionSeq.objects.values_list("session_id", "last_seq")) == {"busy": 5}
    assert session_change_next(session_id="busy", kind="event", ref="next") == 6
    assert session_change_next(session_id="quiet", kind="event", ref="first") == 1
