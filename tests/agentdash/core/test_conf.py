"""One settings surface: every ``AGENTDASH`` key, its default and its environment variable in
one table, read through one cached accessor that follows test overrides."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from agentdash.core.conf import (
    DEFAULTS,
    SETTINGS,
    agentdash_from_environment,
    agentdash_setting,
    agentdash_settings,
)

CONFIGURATION_MD = Path(settings.BASE_DIR) / "docs" / "CONFIGURATION.md"


def test_every_key_has_one_entry_and_an_agentdash_variable() -> None:
    keys = [s.key for s in SETTINGS]
    assert len(keys) == len(set(keys))
    assert all(s.env == f"AGENTDASH_{s.key}" for s in SETTINGS)


def test_the_environment_unset_gives_every_default() -> None:
    assert agentdash_from_environment({}) == dict(DEFAULTS)
    assert agentdash_from_environment({"AGENTDASH_EXECUTOR": "   "}) == dict(DEFAULTS)


def test_variables_are_read_by_type() -> None:
    found = agentdash_from_environment(
        {
            "AGENTDASH_AGENTS": "a.b:c, ,d.e:f",
            "AGENTDASH_EXECUTOR": " celery ",
            "AGENTDASH_INLINE_CONCURRENCY": "3",
            "AGENTDASH_RUN_HEARTBEAT_S": "0.5",
            "AGENTDASH_DEMO_PASSWORD": " spaced secret ",
            "AGENTDASH_WORKER_NICE": " 0 ",
        }
    )
    assert found["AGENTS"] == ["a.b:c", "d.e:f"]
    assert found["EXECUTOR"] == "celery"
    assert found["INLINE_CONCURRENCY"] == 3
    assert found["RUN_HEARTBEAT_S"] == 0.5
    assert found["DEMO_PASSWORD"] == " spaced secret "  # a password is taken as given
    assert found["WORKER_NICE"] == 0
    assert found["RUN_MAX_ATTEMPTS"] == DEFAULTS["RUN_MAX_ATTEMPTS"]


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("AGENTDASH_INLINE_CONCURRENCY", "eight"),
        ("AGENTDASH_RUN_MAX_ATTEMPTS", "2.5"),
        ("AGENTDASH_RUN_STALE_AFTER_S", "soon"),
        ("AGENTDASH_RUN_HEARTBEAT_S", "nan"),
        ("AGENTDASH_REAPER_INTERVAL_S", "inf"),
        ("AGENTDASH_INLINE_CONCURRENCY", "\x00"),
        ("AGENTDASH_RUN_HEARTBEAT_S", "\ud800"),
        ("AGENTDASH_WORKER_NICE", "20"),
        ("AGENTDASH_WORKER_NICE", "-5"),
    ],
)
def test_a_bad_value_is_a_clear_error_naming_the_variable(variable: str, value: str) -> None:
    with pytest.raises(ImproperlyConfigured, match=variable):
        agentdash_from_environment({variable: value})


def test_the_defaults_are_not_shared_with_the_caller() -> None:
    agents = agentdash_from_environment({})["AGENTS"]
    agents.append("x:y")
    assert "x:y" not in DEFAULTS["AGENTS"]
    assert "x:y" not in agentdash_from_environment({})["AGENTS"]


def test_the_settings_module_sets_every_key() -> None:
    assert set(settings.AGENTDASH) == set(DEFAULTS)


def test_an_override_is_read_at_once_and_missing_keys_take_their_defaults(
    settings: Any,
) -> None:
    assert agentdash_setting("INLINE_CONCURRENCY") == settings.AGENTDASH["INLINE_CONCURRENCY"]
    settings.AGENTDASH = {"INLINE_CONCURRENCY": 2}
    assert agentdash_setting("INLINE_CONCURRENCY") == 2
    assert agentdash_setting("EXECUTOR") == DEFAULTS["EXECUTOR"]
    with override_settings(AGENTDASH={"INLINE_CONCURRENCY": 5}):
        assert agentdash_setting("INLINE_CONCURRENCY") == 5
    assert agentdash_setting("INLINE_CONCURRENCY") == 2


def test_the_accessor_is_cached() -> None:
    assert agentdash_settings() is agentdash_settings()
    with pytest.raises(TypeError):
        agentdash_settings()["EXECUTOR"] = "celery"  # type: ignore[index]


def test_an_unknown_key_is_a_programming_error() -> None:
    with pytest.raises(KeyError, match="not an AGENTDASH setting"):
        agentdash_setting("EXECUTR")


def _documented_default(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.env)
def test_configuration_md_documents_each_variable_with_its_default(setting: Any) -> None:
    text = CONFIGURATION_MD.read_text(encoding="utf-8")
    row = re.search(rf"^\| `{setting.env}` \| ([^|]*) \|", text, re.M)
    assert row, f"docs/CONFIGURATION.md has no row for {setting.env}"
    cell = row.group(1)
    if setting.default in ("", []):
        assert cell.startswith("empty"), cell
    else:
        assert cell.startswith(f"`{_documented_default(setting.default)}`"), cell
