"""How the change log hears from the apps above it without importing them: each kind's rows
are read by the app that registered the kind, and committed changes are announced to whoever
registered to hear."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import transaction

from agentdash.agent_sessions.models import AgentSession
from agentdash.changes import items as items_module
from agentdash.changes.announcements import announcer_register, announcer_unregister
from agentdash.changes.items import ItemKind, item_kind_register, item_kinds, item_trimmed
from agentdash.changes.models import SessionChange
from agentdash.changes.services import session_change_next
from tests.agentdash.system_checks import check_ids

MakeSession = Callable[[str], AgentSession]


def test_every_kind_the_log_records_has_an_owner() -> None:
    assert set(item_kinds()) == set(SessionChange.Kind.values)
    assert "agentdash.E030" not in check_ids()


@pytest.fixture
def without_runs_kind(monkeypatch: pytest.MonkeyPatch) -> Iterator[ItemKind]:
    kinds = dict(items_module._kinds)
    removed = kinds.pop(SessionChange.Kind.RUN)
    monkeypatch.setattr(items_module, "_kinds", kinds)
    yield removed


def test_a_kind_nobody_registered_is_a_check_error(without_runs_kind: ItemKind) -> None:
    assert "agentdash.E030" in check_ids()


@pytest.mark.django_db
def test_an_unregistered_kind_reads_as_gone_not_as_a_crash(
    make_session: MakeSession, without_runs_kind: ItemKind
) -> None:
    make_session("s1")
    session_change_next(session_id="s1", kind="run", ref="7")
    assert items_module.items_after(session_id="s1", after_seq=0, limit=10) == [
        {"seq": 1, "kind": "run", "data": None}
    ]


def test_only_kinds_of_the_log_can_be_registered() -> None:
    with pytest.raises(ValueError, match="not a kind of change"):
        item_kind_register("approval", load=lambda refs: {})


@pytest.mark.django_db
def test_a_registered_loader_reads_the_rows_of_its_kind(
    make_session: MakeSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(items_module, "_kinds", dict(items_module._kinds))
    asked: list[set[tuple[str, str]]] = []

    def load(refs: set[tuple[str, str]]) -> dict[tuple[str, str], dict]:
        asked.append(refs)
        return {key: {"ref": key[1]} for key in refs if key[1] != "gone"}

    item_kind_register("run", load=load, trim=lambda data: {**data, "trimmed": True})
    make_session("s1")
    for ref in ("1", "gone", "2"):
        session_change_next(session_id="s1", kind="run", ref=ref)
    items = items_module.items_after(session_id="s1", after_seq=0, limit=10)
    assert asked == [{("s1", "1"), ("s1", "gone"), ("s1", "2")}]  # one call for the kind
    assert [i["data"] for i in items] == [{"ref": "1"}, None, {"ref": "2"}]
    assert item_trimmed(items[0])["data"] == {"ref": "1", "trimmed": True}
    assert item_trimmed(items[1]) == items[1]  # nothing to cut from a gone row


def test_a_kind_without_a_trimmer_is_sent_as_it_is() -> None:
    item = {"seq": 3, "kind": "run", "data": {"id": 1, "status": "running"}}
    assert item_kinds()["run"].trim is None
    assert item_trimmed(item) == item


@pytest.mark.django_db(transaction=True)
def test_committed_changes_are_announced_and_rolled_back_ones_are_not(
    make_session: MakeSession,
) -> None:
    heard: list[tuple[str, int | None]] = []

    def broken(session_id: str, *, seq: int | None = None, **_: Any) -> None:
        raise RuntimeError("this announcer is down")

    def listener(session_id: str, *, seq: int | None = None, **_: Any) -> None:
        heard.append((session_id, seq))

    announcer_register(broken)
    announcer_register(listener)
    announcer_register(listener)  # twice: still told once
    try:
        make_session("s1")
        with transaction.atomic():
            session_change_next(session_id="s1", kind="event", ref="e1")
            assert heard == []  # not before the commit
        with transaction.atomic():
            session_change_next(session_id="s1", kind="event", ref="e2")
            transaction.set_rollback(True)
        session_change_next(session_id="s1", kind="event", ref="e3", announce=False)
        session_change_next(session_id="s1", kind="event", ref="e4")
    finally:
        announcer_unregister(broken)
        announcer_unregister(listener)
    assert heard == [("s1", 1), ("s1", 3)]  # e2's seq was rolled back and taken again by e3
