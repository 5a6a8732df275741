"""WAL checkpoints made on a thread of their own after commits, not inside them
(``agentdash.core.sqlite.checkpoints``): what a commit wrote reaches the database file, and
SQLite's own checkpoint is only a backstop."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from django.db import connections, transaction

from agentdash.core.sqlite.checkpoints import BACKSTOP_PAGES, Checkpointer, checkpointer
from tests.agentdash.core.sqlite_alias import ALIAS, insert, own_database
from tests.waits import until


def _in_the_file_alone(path: Path, tmp: Path) -> int:
    """The rows of ``names`` in the database file ``path`` without its WAL (a copy of the
    file alone): what checkpoints have copied back so far."""
    copy = tmp / "file-alone.sqlite3"
    shutil.copyfile(path, copy)
    with closing(sqlite3.connect(copy)) as connection:
        try:
            return int(connection.execute("SELECT count(*) FROM names").fetchone()[0])
        except sqlite3.OperationalError:  # the table itself is still in the WAL only
            return 0


def _wal_database(path: Path, rows: list[str]) -> sqlite3.Connection:
    """A WAL database at ``path`` that checkpoints nothing itself, with ``rows`` in
    ``names``; its connection kept open (the last one to close would checkpoint)."""
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("CREATE TABLE names (name TEXT NOT NULL)")
    writer.executemany("INSERT INTO names VALUES (?)", [(r,) for r in rows])
    return writer


def test_a_commit_s_pages_reach_the_file_on_the_checkpointer_s_thread(tmp_path: Path) -> None:
    path = tmp_path / "wal.sqlite3"
    with closing(_wal_database(path, [f"n{i}" for i in range(500)])) as writer:
        assert _in_the_file_alone(path, tmp_path) == 0  # all of it still in the WAL
        found = Checkpointer(str(path))
        try:
            found.committed()
            until(lambda: found.made >= 1, "a checkpoint")
            assert _in_the_file_alone(path, tmp_path) == 500
            writer.execute("INSERT INTO names VALUES ('later')")
            found.committed()  # within EVERY_S of the last: made when that time is over
            until(lambda: found.made >= 2, "the next checkpoint")
            assert _in_the_file_alone(path, tmp_path) == 501
        finally:
            found.stop()


def test_once_stopped_the_last_connection_to_close_folds_the_wal_away(tmp_path: Path) -> None:
    path = tmp_path / "wal.sqlite3"
    found = Checkpointer(str(path))
    with closing(_wal_database(path, ["kept"])):
        found.committed()
        until(lambda: found.made >= 1, "a checkpoint")
        found.stop()
        assert found._thread is not None and not found._thread.is_alive()
    # The writer was the last connection open: SQLite removed the WAL as it closed (the
    # checkpointer's own connection, open, would have kept it there).
    assert not Path(f"{path}-wal").exists()
    assert _in_the_file_alone(path, tmp_path) == 1


@pytest.fixture
def db(tmp_path: Path, django_db_blocker: Any) -> Iterator[Callable[..., list[str]]]:
    with django_db_blocker.unblock(), own_database(tmp_path / "own.sqlite3") as names:
        yield names


def test_the_backend_s_commits_wake_it_and_sqlite_s_own_is_a_backstop(
    db: Callable[[], list[str]], tmp_path: Path
) -> None:
    path = Path(connections[ALIAS].settings_dict["NAME"])
    found = checkpointer(str(path))
    with connections[ALIAS].cursor() as cursor:
        cursor.execute("PRAGMA wal_autocheckpoint")
        assert cursor.fetchone()[0] == BACKSTOP_PAGES
    made = found.made
    with transaction.atomic(using=ALIAS):
        for i in range(300):
            insert(f"n{i}")
    until(lambda: found.made > made, "a checkpoint after the commit")
    assert _in_the_file_alone(path, tmp_path) == 300
    made = found.made
    insert("alone")  # outside a transaction: SQLite commits it on its own
    until(lambda: found.made > made, "a checkpoint after the write")
    assert _in_the_file_alone(path, tmp_path) == 301
    assert db() == [*(f"n{i}" for i in range(300)), "alone"]


def test_one_checkpointer_a_file_whatever_the_path_says(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    assert checkpointer(str(tmp_path / "a" / ".." / "x.sqlite3")) is checkpointer(
        str(tmp_path / "x.sqlite3")
    )
    assert checkpointer(str(tmp_path / "y.sqlite3")) is not checkpointer(
        str(tmp_path / "x.sqlite3")
    )


def test_no_file_is_made_and_one_made_again_is_checkpointed(tmp_path: Path) -> None:
    path = tmp_path / "wal.sqlite3"
    found = Checkpointer(str(path))
    try:
        found.committed()  # no file yet: nothing to do, and none is made
        until(lambda: found.rounds >= 1, "the wake served")
        assert not path.exists() and found.made == 0
        with closing(_wal_database(path, ["first"])):
            found.committed()
            until(lambda: found.made >= 1, "a checkpoint once the file is there")
            assert _in_the_file_alone(path, tmp_path) == 1
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        with closing(_wal_database(path, ["again", "and again"])):  # a new file, its name
            found.committed()
            until(lambda: found.made >= 2, "a checkpoint of the new file")
            assert _in_the_file_alone(path, tmp_path) == 2
    finally:
        found.stop()


def test_a_failed_checkpoint_is_logged_and_the_next_commit_tries_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "wal.sqlite3"
    path.write_bytes(b"not a database " * 512)
    found = Checkpointer(str(path))
    try:
        with caplog.at_level("WARNING", logger="agentdash.core.sqlite.checkpoints"):
            found.committed()
            until(lambda: found.rounds >= 1, "the wake served")
        assert "WAL checkpoint" in caplog.text and found.made == 0
        path.unlink()
        with closing(_wal_database(path, ["after"])):
            found.committed()
            until(lambda: found.made >= 1, "a checkpoint once the file is a database")
            assert _in_the_file_alone(path, tmp_path) == 1
    finally:
        found.stop()
