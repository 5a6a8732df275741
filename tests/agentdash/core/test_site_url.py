"""Links made outside a request (``manage.py eval``) go where the dashboard is: the
``AGENTDASH_BASE_URL`` setting, else the address ``make run`` serves on, which it records."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings

from agentdash.core.site_url import DEFAULT_BASE_URL, served_url_path, site_base_url

ROOT = Path(django_settings.BASE_DIR)


@pytest.fixture
def var_dir(settings: Any, tmp_path: Path) -> Path:
    settings.VAR_DIR = tmp_path
    return tmp_path


def _make_run_records(tmp_path: Path, *variables: str) -> None:
    """Runs the line of ``make run`` that records its address (``make -n`` prints the recipe
    without running it), with ``AGENTDASH_VAR_DIR`` at ``tmp_path``."""
    recipe = subprocess.run(
        ["make", "-n", "run", *variables], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.replace("\\\n", " ")
    (line,) = [x for x in recipe.splitlines() if "served_url" in x]
    subprocess.run(
        ["bash", "-c", line], env={"AGENTDASH_VAR_DIR": str(tmp_path)}, cwd=tmp_path, check=True
    )


@pytest.mark.parametrize(
    ("variables", "url"),
    [
        ((), "http://127.0.0.1:8000"),
        (("PORT=8123",), "http://127.0.0.1:8123"),
        (("HOST=0.0.0.0", "PORT=8124"), "http://127.0.0.1:8124"),
        (("HOST=::1", "PORT=8125"), "http://[::1]:8125"),
    ],
)
def test_links_go_where_make_run_serves(
    var_dir: Path, variables: tuple[str, ...], url: str
) -> None:
    _make_run_records(var_dir, *variables)
    assert served_url_path().read_text().strip() == url
    assert site_base_url() == url


def test_the_setting_wins(var_dir: Path, settings: Any) -> None:
    served_url_path().write_text("http://127.0.0.1:8123\n")
    settings.AGENTDASH = {**settings.AGENTDASH, "BASE_URL": "https://dash.example.com/"}
    assert site_base_url() == "https://dash.example.com"


@pytest.mark.parametrize("recorded", [None, "", "javascript:alert(1)", "http://x\n\x00"])
def test_without_a_usable_record_links_go_to_make_runs_default(
    var_dir: Path, recorded: str | None
) -> None:
    if recorded is not None:
        served_url_path().write_text(recorded)
    assert site_base_url() == DEFAULT_BASE_URL == "http://127.0.0.1:8000"
