"""The real google-adk, both ways round: an ADK agent (google-adk 2.13 in its own virtualenv,
bench/.venv-adk, made by the project's bench/run.py) exports with the official OTLP/HTTP
exporter, configured by the standard environment variables only, to a running AgentDash.
Its first turn becomes a session of the key's owner with the run/agent/model/tool spans;
with her socket open, the second turn — also through ``agentdash.otel``, which sends spans
when they start — arrives live.

The virtualenv is made on first use (about a minute: PyPI); CI makes it here too.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.agentdash.ingest.ingest_server import external_sessions, key_create, span_names
from tests.agentdash.live_harness import ROOT, Browserless, LiveClient

pytestmark = [pytest.mark.slow, pytest.mark.own_servers]

ADK_PYTHON = ROOT / "bench" / ".venv-adk" / "bin" / "python"
AGENT = ROOT / "tests" / "agentdash" / "ingest" / "adk_agent.py"


@pytest.fixture(scope="module")
def adk_python() -> Path:
    made = subprocess.run(
        [sys.executable, "-c", "import run; run.ensure_adk_venv()"],
        cwd=ROOT / "bench", capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert made.returncode == 0, f"bench/.venv-adk could not be made:\n{made.stderr[-3000:]}"
    return ADK_PYTHON


def adk_turn(python: Path, url: str, key: str, session: str, live: bool = False) -> dict[str, Any]:
    """One turn of the ADK agent; ``live``: also through ``agentdash.otel`` (starts too)."""
    env = {
        "PATH": "/usr/bin:/bin",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{url}/v1/traces",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS": f"Authorization=Bearer%20{key}",
        "OTEL_SERVICE_NAME": "capitals-service",
    }
    if live:
        env.update(AGENTDASH_OTEL_LIVE="1", AGENTDASH_URL=url, AGENTDASH_INGEST_KEY=key)
    ran = subprocess.run(
        [str(python), str(AGENT), session, "--turns", "1"],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert ran.returncode == 0, f"the ADK agent failed:\n{ran.stdout}\n{ran.stderr[-3000:]}"
    report: dict[str, Any] = json.loads(ran.stdout.strip().splitlines()[-1])
    return report


async def second_turn_live(
    alice: Browserless, session_id: str, turn: Any
) -> dict[str, dict[str, Any]]:
    client = LiveClient(alice, session_id)
    try:
        await client.open()
        await client.hello(after_seq=alice.snapshot(session_id)["seq"])
        report = await asyncio.to_thread(turn)
        wanted = {
            "invoke_workflow capitals",
            "invoke_agent capitals",
            "execute_tool get_capital_city",
        }
        assert wanted <= set(report["span_names"]), report
        assert report["agentdash_otel"] is True, report
        found: dict[str, dict[str, Any]] = await client.wait_for(
            lambda _: wanted <= set(span_names(client)) and span_names(client),
            "the second turn's spans on the socket",
            timeout=60,
        )
        return found
    finally:
        await client.close()


def test_an_adk_agent_streams_into_agentdash(
    adk_python: Path, server: tuple[str, dict[str, str]]
) -> None:
    url, env = server
    key = key_create(env, "alice", "capitals")
    adk_turn(adk_python, url, key, "adk-interop-1")
    alice = Browserless(url)
    alice.log_in("alice")
    (session_id,) = external_sessions(alice)  # one session for the ADK session
    first = alice.snapshot(session_id)
    assert first["spans_total"] == 5
    assert (first["usage"]["input"], first["usage"]["output"]) == (100, 20)

    found = asyncio.run(
        asyncio.wait_for(
            second_turn_live(
                alice,
                session_id,
                lambda: adk_turn(adk_python, url, key, "adk-interop-1", live=True),
            ),
            240,
        )
    )
    kinds = {name: data["attributes"].get("agentdash.span.kind") for name, data in found.items()}
    assert kinds["invoke_workflow capitals"] == "invocation"
    assert kinds["invoke_agent capitals"] == "agent"
    assert kinds["execute_tool get_capital_city"] == "tool"
    assert any(kind == "model" for name, kind in kinds.items() if name.startswith("generate_"))
    assert alice.snapshot(session_id)["spans_total"] == 10
