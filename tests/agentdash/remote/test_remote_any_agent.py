"""The same controls for an any-agent app: the real any-agent 1.18 (its own venv) connects a
config with a callback of its own; an operator sees the callbacks on the run's session page and
switches the app's callback off for every session: the next run does not call it. A
breakpoint set there pauses the app's next tool call until answered on the new run's page:
the edited arguments are what the tool receives; a denied one ends the run."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agentdash.ingest.ingest_server import embedded_server, external_sessions, key_create
from tests.agentdash.live_harness import Browserless
from tests.agentdash.remote.test_remote_adk import (
    App,
    answer,
    breakpoint_set,
    pending,
    signed_in,
    toggle,
)

pytestmark = [pytest.mark.slow, pytest.mark.own_servers]

ROOT = Path(__file__).resolve().parents[3]
APP = Path(__file__).parent / "any_agent_remote_app.py"


@pytest.fixture(scope="module")
def any_agent_python() -> Path:
    """The any-agent venv's Python (made once per machine: bench/sender_fixtures.py)."""
    made = subprocess.run(
        [sys.executable, "-c",
         "import sender_fixtures as s; print(s.venv('any_agent', s.SENDERS['any_agent']))"],
        cwd=ROOT / "bench", capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert made.returncode == 0, f"the any-agent venv could not be made:\n{made.stderr[-3000:]}"
    return Path(made.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """One real daphne for the module's tests (each finds the sessions its runs made)."""
    with embedded_server(tmp_path_factory.mktemp("remote-any-agent")) as found:
        yield found


@pytest.fixture(scope="module")
def app(server: tuple[str, dict[str, str]], any_agent_python: Path) -> Iterator[tuple[App, str]]:
    url, env = server
    key = key_create(env, "alice", "weather-app")
    clean = {k: v for k, v in env.items() if not k.startswith("OTEL_")}
    running = App(url, key, clean, python=any_agent_python, script=APP)
    try:
        assert running.answer() == {"connected": True}
        yield running, url
    finally:
        running.close()


def test_an_any_agent_callback_switched_off_is_skipped_in_the_app(
    app: tuple[App, str],
) -> None:
    running, url = app
    first = running.ask("run")
    assert first["answer"] == "It is sunny in Paris, 21 °C."
    assert first["llm_calls"] == 2  # a call, then the answer
    alice, operator = signed_in(url)
    session_id = external_sessions(alice)[0]  # the run's: the newest
    offered = {
        (c["agent"], c["slot"], c["name"]) for c in operator.snapshot(session_id)["callbacks"]
    }
    assert ("weather_agent", "callbacks", "CountLlmCalls") in offered
    ack = asyncio.run(
        toggle(operator, session_id, agent="weather_agent", callback="CountLlmCalls",
               enabled=False, scope="global", reason="not while debugging")
    )  # fmt: skip
    assert ack["type"] == "ack", ack
    assert running.ask("expect weather_agent CountLlmCalls off") == {"ok": True}
    again = running.ask("run")
    assert again["answer"] == "It is sunny in Paris, 21 °C."
    assert again["llm_calls"] == 2  # skipped: the count did not move


def test_a_breakpoint_pauses_an_any_agent_tool_and_its_edited_args_reach_it(
    app: tuple[App, str],
) -> None:
    running, url = app
    assert running.ask("run")["received"] == ["Paris"]
    alice, operator = signed_in(url)
    known = external_sessions(alice)
    first = known[0]  # the run's: the newest
    breakpoint_set(operator, first, "get_weather", scope="agent")
    assert running.ask("breakpoints 1") == {"ok": True}
    assert running.ask("start") == {"started": True}
    paused_in = next_session(alice, *known)  # a run is a trace: a session of its own
    [paused] = pending(alice, paused_in)
    assert (paused["tool"], paused["args"]) == ("get_weather", {"city": "Paris"})
    edited = {**paused["payload"], "args": {"city": "Oslo"}}
    assert (
        answer(alice, paused_in, paused["request_id"], "approve", payload=edited)["type"] == "ack"
    )
    done = running.ask("finish")
    assert done["received"] == ["Oslo"] and done["answer"] == "It is sunny in Paris, 21 °C."
    # Denied, the run ends there: any-agent cannot refuse one call.
    assert running.ask("start") == {"started": True}
    denied_in = next_session(alice, *known, paused_in)
    [asked] = pending(alice, denied_in)
    refused = answer(alice, denied_in, asked["request_id"], "cancel", reason="enough")
    assert refused["type"] == "ack", refused
    stopped = running.ask("finish")
    assert stopped["received"] == [] and "enough" in str(stopped["stopped"])


def next_session(user: Browserless, *known: str) -> str:
    """The id of ``user``'s newest external session not among ``known``, once there is one."""
    for _ in range(300):
        found = [s for s in external_sessions(user) if s not in known]
        if found:
            return found[0]
        time.sleep(0.1)
    raise AssertionError("no new session")
