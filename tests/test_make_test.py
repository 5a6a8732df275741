"""`make test`'s two passes at once (scripts/test.sh): a pass that fails fails the whole, and
what the PostgreSQL pass printed is shown after the SQLite pass's.

The script runs for real, asked for one test of a module of its own, outside the suite: the
SQLite pass runs it; the PostgreSQL pass, which takes only the tests about the database
(marker ``database``), finds nothing to run — pytest's exit 5, a failure, never a pass.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow  # two pytest runs, one of them on PostgreSQL


def test_a_failed_postgresql_pass_fails_make_test_and_is_shown(tmp_path: Path) -> None:
    module = tmp_path / "test_alone.py"
    module.write_text("def test_alone():\n    print('the SQLite pass ran me')\n")
    log = tmp_path / "postgres.log"
    env = {**os.environ, "TEST_WORKERS": "0", "TEST_PG_LOG": str(log), "CI": "1"}
    env.pop("PYTEST_XDIST_WORKER", None)
    command = [ROOT / "scripts" / "test.sh", module, "-k", "test_alone", "-p", "no:cacheprovider"]
    result = subprocess.run(
        [str(part) for part in command],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    said = result.stdout + result.stderr
    assert result.returncode != 0, said
    assert "1 passed" in said  # the SQLite pass
    assert "SQLite pass: exit 0; PostgreSQL pass: exit 5" in said
    shown = said.rpartition(f"the PostgreSQL pass ({log})")[2]
    assert "deselected" in shown  # its output, after the SQLite pass's
