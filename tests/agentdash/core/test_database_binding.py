"""PostgreSQL with its parameters bound on the server (psycopg's server-side binding), unless
``DATABASE_SERVER_SIDE_BINDING=0`` asks for Django's default (quoted into the statement):
hostile text and JSON come back as they went, either way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from agentdash.agent_sessions.models import AgentSession
from tests.agentdash.stored import session_of

ROOT = Path(__file__).resolve().parents[3]
TEXTS = (
    'it\'s \\ "quoted" %s %(name)s $1 ? :x',
    "'; DROP TABLE agentdash_agentsession; --",
    "línea\r\n\ttab \x01\x1f \u2028 \U0001f600",
    "E'\\x00' \\\\ \\",
    "x" * 5_000,
)
PROBE = (
    "import agentdash.settings as s; o = s.DATABASES['default']['OPTIONS']; "
    "print(o.get('server_side_binding'), o.get('prepare_threshold'))"
)


def binding(**env: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        env={
            **{k: v for k, v in os.environ.items() if k != "DATABASE_SERVER_SIDE_BINDING"},
            "DATABASE_URL": "postgres://u:p@127.0.0.1:1/db",
            **env,
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


def test_postgresql_binds_and_prepares_on_the_server_unless_told_not_to() -> None:
    assert binding() == "True 5"
    assert binding(DATABASE_SERVER_SIDE_BINDING="1") == "True 5"
    assert binding(DATABASE_SERVER_SIDE_BINDING="0") == "False None"


@pytest.mark.database
@pytest.mark.django_db
def test_a_statement_run_again_is_prepared_on_the_server() -> None:
    """PostgreSQL parses a statement once per connection after its fifth run (the flush's
    many-row inserts parsed every row before); SQLite keeps its own statement cache."""
    if connection.vendor != "postgresql":
        return
    marker = "SELECT %s::text AS prepared_probe"
    with connection.cursor() as cursor:
        for n in range(6):
            cursor.execute(marker, [str(n)])
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [row[0] for row in cursor.fetchall()]
    assert any("prepared_probe" in text for text in prepared), prepared


@pytest.mark.database
@pytest.mark.django_db
def test_hostile_text_and_json_come_back_as_they_went() -> None:
    """On either database; on PostgreSQL (make test's second pass) through the cursor the
    setting chose."""
    if connection.vendor == "postgresql":
        connection.ensure_connection()
        on_server = connection.settings_dict["OPTIONS"].get("server_side_binding") is True
        expected = "ServerBindingCursor" if on_server else "Cursor"
        assert type(connection.connection.cursor()).__name__ == expected
    for number, text in enumerate(TEXTS):
        state = {"text": text, "nested": [{"quote": "'; DROP TABLE x; --", "n": number}]}
        session_of(None, f"bind-{number}")
        AgentSession.objects.filter(pk=f"bind-{number}").update(title=text[:200], state=state)
    for number, text in enumerate(TEXTS):
        found = AgentSession.objects.get(id=f"bind-{number}")
        assert found.title == text[:200]
        assert json.dumps(found.state, sort_keys=True) == json.dumps(
            {"text": text, "nested": [{"quote": "'; DROP TABLE x; --", "n": number}]},
            sort_keys=True,
        )
