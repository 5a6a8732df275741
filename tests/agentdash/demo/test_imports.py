"""The demo modules import (and the data agent runs) without Django being set up, as
``python -m runtime chat agentdash.demo.data_agent`` does."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.conf import settings

pytestmark = pytest.mark.slow  # each test starts a Python of its own: ~2 s

SCRIPT = """
from runtime.cli import main
import django.apps
main(["chat", "agentdash.demo.{module}", "-m", {message!r}])
assert not django.apps.apps.ready
"""


def run_chat(module: str, message: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    env.pop("GOOGLE_API_KEY", None)
    env.pop("GEMINI_API_KEY", None)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(module=module, message=message)],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def test_support_desk_chats_without_django() -> None:
    out = run_chat("support_desk", "A billing question about invoice 1003")
    assert "[support_desk] calls transfer_to_agent({'agent_name': 'billing_agent'})" in out
    assert "42.00 EUR" in out


def test_data_agent_uses_the_default_policy_without_django() -> None:
    out = run_chat("data_agent", 'Run this query sql: "SELECT * FROM salaries"')
    assert "unauthorized tables: salaries. Allowed: customers, orders" in out


def test_importing_the_demo_agents_loads_neither_django_nor_celery() -> None:
    script = (
        "import os, sys\n"
        "import agentdash.demo.capital, agentdash.demo.support_desk, agentdash.demo.data_agent\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'celery'))\n"
        "assert not loaded, loaded\n"
        "assert 'DJANGO_SETTINGS_MODULE' not in os.environ\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    subprocess.run(
        [sys.executable, "-c", script], cwd=settings.BASE_DIR, env=env, check=True, timeout=60
    )
