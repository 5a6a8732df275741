"""The servers' database templates (live_harness.sqlite_prepared): one per environment, not
one per test — the test harness's own promise, since each template costs a migrate and a
seed (seconds of CPU)."""

from __future__ import annotations

from pathlib import Path

from tests.agentdash.live_harness import _template_key, base_env, embedded_env


def test_a_template_is_the_environment_but_its_paths_and_the_running_test() -> None:
    one = base_env(DATABASE_URL="sqlite:////tmp/a/db.sqlite3", AGENTDASH_VAR_DIR="/tmp/a")
    other = {
        **base_env(DATABASE_URL="sqlite:////tmp/b/db.sqlite3", AGENTDASH_VAR_DIR="/tmp/b"),
        "PYTEST_CURRENT_TEST": "tests/x.py::test_other (setup)",
    }
    assert _template_key(one, True) == _template_key(other, True)
    assert _template_key(one, True) != _template_key(one, False)  # seeded or not
    agents = {**one, "AGENTDASH_AGENTS": "tests.security.xss_agent:root_agent"}
    assert _template_key(agents, True) != _template_key(one, True)  # what may seed differently


def test_servers_on_the_embedded_default_share_one_template(tmp_path: Path) -> None:
    """The modules that start a daphne of their own (ingest, hostile ASGI, daphne's limits)
    ask for the same environment, so they copy one template instead of making one each."""
    first, second = embedded_env(tmp_path / "a"), embedded_env(tmp_path / "b")
    assert first["DATABASE_URL"] != second["DATABASE_URL"]
    assert _template_key(first, True) == _template_key(second, True)
    assert "REDIS_URL" not in first and first["AGENTDASH_EXECUTOR"] == "inline"
