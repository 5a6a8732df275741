"""An agent that runs elsewhere, debugged, not only watched: the real google-adk (its own venv,
bench/.venv-adk) runs an app that calls ``agentdash.client.connect`` against a real daphne;
its session page offers the app's callbacks to an operator, a switch turned off there for one
session is skipped at the app's next callback in that session (and only there), an
operator's state edit is seen by the app's next instruction, a breakpoint pauses the app's
tool until answered on the page (the edited arguments are what the tool receives), ADK's tool
confirmation is answered there, and a pause outlives AgentDash killed and started again."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agentdash.ingest.ingest_server import Dashboard, key_create, restartable_server
from tests.agentdash.live_harness import Browserless, LiveClient
from tests.waits import until

pytestmark = [pytest.mark.slow, pytest.mark.own_servers]

ROOT = Path(__file__).resolve().parents[3]
ADK_PYTHON = ROOT / "bench" / ".venv-adk" / "bin" / "python"
APP = Path(__file__).parent / "adk_remote_app.py"


@pytest.fixture(scope="module")
def adk_venv() -> None:
    made = subprocess.run(
        [sys.executable, "-c", "import run; run.ensure_adk_venv()"],
        cwd=ROOT / "bench", capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert made.returncode == 0, f"bench/.venv-adk could not be made:\n{made.stderr[-3000:]}"


class App:
    """The app's process: a command in, its JSON answer out."""

    def __init__(
        self, url: str, key: str, env: dict[str, str], *, python: Path = ADK_PYTHON,
        script: Path = APP,
    ) -> None:  # fmt: skip
        # Its log to a file: a pipe nobody reads would stop a chatty app when it fills.
        self.log = tempfile.TemporaryFile("w+")  # noqa: SIM115 (closed in close())
        self.proc = subprocess.Popen(
            [str(python), str(script)],
            env={**env, "AGENTDASH_URL": url, "AGENTDASH_INGEST_KEY": key},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True,
        )  # fmt: skip

    def answer(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self.log.seek(0)
            raise AssertionError(f"the app ended: {self.log.read()[-3000:]}")
        found: dict[str, Any] = json.loads(line)
        return found

    def ask(self, command: str) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self.answer()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.ask("quit")
                self.proc.wait(30)
            except (AssertionError, OSError, subprocess.TimeoutExpired):
                self.proc.kill()
        self.log.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    """One real daphne for the module's tests (each works in sessions of its own); the last
    test kills it and starts it again."""
    with restartable_server(tmp_path_factory.mktemp("remote-adk")) as found:
        yield found


@pytest.fixture(scope="module")
def app(server: Dashboard, adk_venv: None) -> Iterator[tuple[App, str]]:
    url, env = server.url, server.env
    key = key_create(env, "alice", "capitals-app")
    running = App(url, key, {k: v for k, v in env.items() if not k.startswith("OTEL_")})
    try:
        assert running.answer() == {"connected": True}
        yield running, url
    finally:
        running.close()


def signed_in(url: str) -> tuple[Browserless, Browserless]:
    """The app's owner (alice) and an operator, signed in to the server at ``url``."""
    alice, operator = Browserless(url), Browserless(url)
    alice.log_in("alice")
    operator.log_in("operator")
    return alice, operator


def breakpoint_set(operator: Browserless, session_id: str, tool: str, *, scope: str) -> None:
    """A breakpoint before ``tool``, set on the session's Breakpoints page as a person does
    (``scope``: ``session``, or ``agent``: every session of the app)."""
    where = f"/sessions/{session_id}/breakpoints/"
    operator.post(where, where, {"kind": "before_tool", "tool_name": tool, "scope": scope,
                                 "reason": "look at the call"})  # fmt: skip


def session_named(user: Browserless, conversation: str) -> str:
    """The id of ``user``'s ingested session of ``conversation`` (its title ends with it),
    once it is in the list: the app sends its spans as they start, on a thread of its own, so
    a turn may answer before the first of them is stored."""
    return str(until(lambda: _listed(user, conversation), f"a session of {conversation!r}"))


def _listed(user: Browserless, conversation: str) -> str | None:
    with user.opener.open(f"{user.url}/", timeout=30) as page:
        html = page.read().decode()
    for session_id, title in re.findall(r'href="/sessions/(otlp-[0-9a-f]+)/"[^>]*>([^<]*)<', html):
        if title.endswith(f" · {conversation}"):
            return str(session_id)
    return None


async def toggle(operator: Browserless, session_id: str, **request: Any) -> dict[str, Any]:
    return await ask(operator, session_id, {"type": "callback.toggle", **request})


async def ask(operator: Browserless, session_id: str, request: dict[str, Any]) -> dict[str, Any]:
    """Send one request over the session's socket, as the page does; its answer."""
    client = LiveClient(operator, session_id)
    try:
        await client.open()
        await client.hello(after_seq=operator.snapshot(session_id)["seq"])
        await client.send(request)
        return await client.wait_for(
            lambda received: next(
                (r.message for r in received if r.message.get("type") in ("ack", "error")),
                None,
            ),
            "the request's answer",
        )
    finally:
        await client.close()


def test_a_callback_switched_off_in_the_dashboard_is_skipped_in_the_app(
    app: tuple[App, str],
) -> None:
    running, url = app
    first = running.ask("run s1")
    assert first["answer"] == "The capital of France is Paris."
    assert first["model_calls"] == 2  # the callback ran before each model call
    alice, operator = signed_in(url)
    session_id = session_named(alice, "s1")
    offered = operator.snapshot(session_id)["callbacks"]
    assert {(c["agent"], c["slot"], c["name"]) for c in offered} >= {
        ("capitals", "before_model", "before_model")
    }
    ack = asyncio.run(
        toggle(operator, session_id, agent="capitals", callback="before_model",
               enabled=False, scope="session", reason="skip it in s1")
    )  # fmt: skip
    assert ack["type"] == "ack", ack
    assert running.ask("expect capitals before_model s1 off") == {"ok": True}
    again = running.ask("run s1")
    assert again["answer"] == "The capital of France is Paris."
    assert again["model_calls"] == 2  # skipped: the count did not move
    other = running.ask("run s2")  # another session: the switch is s1's alone
    assert other["model_calls"] == 2
    assert operator.snapshot(session_id)["callbacks"][0]["enabled"] is False


def test_an_operators_state_edit_is_seen_by_the_apps_next_instruction(
    app: tuple[App, str],
) -> None:
    running, url = app
    first = running.ask("run s3")
    assert "City: \n" in first["instruction"]  # no city in the state yet
    alice, operator = signed_in(url)
    session_id = session_named(alice, "s3")

    # The page shows the state the app runs with (reported at its steps, mirrored).
    def mirrored() -> dict[str, Any] | None:
        found: dict[str, Any] = operator.snapshot(session_id)
        return found if found["state"].get("model_calls") == 2 else None

    snapshot = until(mirrored, "the app's state mirrored on the page")
    answer = asyncio.run(
        ask(operator, session_id, {"type": "state.edit", "delta": {"city": "Oslo"},
                                   "expected_version": snapshot["version"],
                                   "reason": "try another city"})
    )  # fmt: skip
    assert answer["type"] == "ack", answer
    assert running.ask("edits s3") == {"ok": True}
    second = running.ask("run s3")
    assert "City: Oslo\n" in second["instruction"]  # the edit, at the next step
    assert second["model_calls"] == 4  # the app's own state went on from where it was
    third = running.ask("run s3")  # applied once: the app's state is its own again
    assert "City: Oslo\n" in third["instruction"] and third["model_calls"] == 6


def pending(
    user: Browserless, session_id: str, count: int = 1, *, placed: bool = False
) -> list[dict[str, Any]]:
    """The session's pending requests as its page reads them, once there are ``count`` (and,
    ``placed``, each has its tool call's span to show on the timeline)."""
    found: list[dict[str, Any]] = []

    def read() -> tuple[list[dict[str, Any]]] | None:  # (a tuple: true when the list is empty)
        with user.opener.open(f"{user.url}/sessions/{session_id}/confirmations/", timeout=30) as r:
            found[:] = json.loads(r.read())["pending"]
        if len(found) >= count and (not placed or all(p["span"] for p in found)):
            return (list(found),)
        return None

    return until(read, f"{count} pending requests", detail=lambda: str(found))[0]


def answer(user: Browserless, session_id: str, request_id: str, decision: str,
           **more: Any) -> dict[str, Any]:  # fmt: skip
    request = {"type": "confirmation.answer", "request_id": request_id, "decision": decision,
               "reason": more.pop("reason", ""), **more}  # fmt: skip
    return asyncio.run(ask(user, session_id, request))


def test_a_breakpoint_pauses_the_apps_tool_and_the_edited_args_are_what_it_receives(
    app: tuple[App, str],
) -> None:
    running, url = app
    assert running.ask("run s4")["received"] == ["France"]
    alice, operator = signed_in(url)
    session_id = session_named(alice, "s4")
    breakpoint_set(operator, session_id, "get_capital_city", scope="session")
    assert running.ask("breakpoints 1") == {"ok": True}
    assert running.ask("start s4") == {"started": True}
    # Its card shows where it waits: the running tool call (ADK names the call only at its
    # end: the running span of that tool).
    [paused] = pending(alice, session_id, placed=True)
    assert paused["request_id"].startswith("remote-")
    assert (paused["tool"], paused["args"]) == ("get_capital_city", {"country": "France"})
    assert paused["payload"]["args"] == {"country": "France"} and paused["remote"]["connected"]
    assert running.ask("waiting") == {"waiting": 1}  # the tool has not run
    edited = {**paused["payload"], "args": {"country": "Japan"}}
    ack = answer(alice, session_id, paused["request_id"], "approve", payload=edited)
    assert ack["type"] == "ack", ack
    # Japan needs ADK's tool confirmation: the edited call is what its gate sees, and the
    # page asks for it next.
    [confirm] = [p for p in pending(alice, session_id) if p["request_id"] != paused["request_id"]]
    assert (confirm["tool"], confirm["args"]) == ("get_capital_city", {"country": "Japan"})
    assert "breakpoint" not in (confirm["payload"] or {})
    assert answer(alice, session_id, confirm["request_id"], "approve")["type"] == "ack"
    done = running.ask("finish")
    assert done["received"] == ["Japan"]
    assert done["answer"] == "The capital of Japan is Tokyo."
    again = answer(alice, session_id, confirm["request_id"], "deny", reason="too late")
    assert again["type"] == "error" and again["code"] == "conflict", again


def test_a_denied_confirmation_never_runs_the_tool(app: tuple[App, str]) -> None:
    running, url = app
    assert running.ask("start s5 Japan") == {"started": True}
    alice = Browserless(url)
    alice.log_in("alice")
    session_id = session_named(alice, "s5")
    [asked] = pending(alice, session_id)
    assert asked["payload"] is None and "get_capital_city" in asked["hint"]
    refused = answer(alice, session_id, asked["request_id"], "deny", reason="not Japan")
    assert refused["type"] == "ack", refused
    done = running.ask("finish")
    assert done["received"] == []  # ADK's gate answered the model instead
    assert pending(alice, session_id, count=0) == []


def test_a_pause_outlives_agentdash_killed_and_takes_the_answer_given_after(
    app: tuple[App, str], server: Dashboard
) -> None:
    running, url = app
    assert running.ask("start s6 Japan") == {"started": True}
    alice = Browserless(url)
    alice.log_in("alice")
    session_id = session_named(alice, "s6")
    [asked] = pending(alice, session_id)
    server.kill()
    assert running.ask("waiting") == {"waiting": 1}  # the app waits; its thread retries
    server.start()
    assert server.url == url
    [again] = pending(alice, session_id)  # the same pause, kept (the login too)
    assert again["request_id"] == asked["request_id"]
    assert answer(alice, session_id, again["request_id"], "approve")["type"] == "ack"
    done = running.ask("finish")
    assert done["received"] == ["Japan"] and done["answer"] == "The capital of Japan is Tokyo."
