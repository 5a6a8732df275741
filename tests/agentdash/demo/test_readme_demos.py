"""README.md's Quick start names every demo agent ``make run`` offers, and how to get the
browser the browser tests need; its questions for the analyst work on the offline model."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
from django.conf import settings

from agentdash.core.conf import DEMO_AGENTS
from agentdash.demo import analyst

README = (Path(settings.BASE_DIR) / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    start = README.index(f"\n{title}\n")
    end = README.find("\n#", start + len(title) + 2)
    return README[start:end]


def _demo_names() -> list[str]:
    names = []
    for reference in DEMO_AGENTS:
        module, attribute = reference.split(":")
        names.append(getattr(importlib.import_module(module), attribute).name)
    return names


def test_the_quick_start_names_every_demo_agent() -> None:
    quick_start = _section("## Quick start")
    names = _demo_names()
    assert len(names) == 4
    assert "the four demo agents" in quick_start
    for name in names:
        assert f"**{name}**" in quick_start, name


def test_the_offline_questions_cover_every_demo_agent() -> None:
    offline = _section("### What to ask the demos offline")
    for name in _demo_names():
        assert f"- **{name}** —" in offline, name


def test_the_quick_start_says_where_the_browser_tests_browser_comes_from() -> None:
    quick_start = _section("## Quick start")
    assert "scripts/chromium.sh" in quick_start
    assert (Path(settings.BASE_DIR) / "scripts" / "chromium.sh").is_file()
    for said in ("playwright install", "AGENTDASH_CHROMIUM", "apt-get", "skips"):
        assert said in quick_start, said


def _analyst_questions() -> list[str]:
    offline = _section("### What to ask the demos offline")
    bullet = re.split(r"\n(?:- |\n)", offline[offline.index("- **analyst** —") :])[0]
    questions = re.findall(r'"([^"]+)"', bullet.replace("\n  ", " "))
    assert questions
    return questions


@pytest.mark.django_db(transaction=True)  # the guardrails read their policies (none here)
@pytest.mark.parametrize("question", _analyst_questions())
def test_the_readmes_analyst_questions_run_python(chat, question: str) -> None:  # type: ignore[no-untyped-def]
    turn = chat(analyst.root_agent).send(question)
    ((_, tool, _),) = turn.calls
    assert tool == "run_python"
    (result,) = turn.results
    assert result["exit_code"] == 0 and "mean: " in result["stdout"]
