"""A google-adk app under AgentDash's controls, driven line by line on stdin by
``test_remote_adk.py`` (run by ``bench/.venv-adk/bin/python``: the real google-adk, its own
venv). The agent is ``tests/agentdash/ingest/adk_agent.py``'s (an offline model, a tool, a
``before_model`` callback that counts model calls in session state), put under the controls
with the three lines the README shows: ``connect(agent, url=..., key=...)``.

Commands (one JSON line answers each):

- ``run SESSION [COUNTRY]``: one turn on ADK session SESSION (made on first use), asking
  for COUNTRY's capital (France unless named) → ``{"answer", "model_calls", "instruction",
  "received"}`` (the callback's count in the session's state, the last system instruction,
  the countries the tool received in the turn). The tool requires ADK's tool confirmation
  for Japan;
- ``start SESSION [COUNTRY]``: the same turn, begun in the background → ``{"started"}``;
  ``finish`` waits for it → what ``run`` answers;
- ``breakpoints N``: wait (≤ 30 s) until the process knows N breakpoints → ``{"ok": bool}``;
- ``waiting``: how many of its steps wait for an answer now → ``{"waiting": N}``;
- ``expect AGENT CALLBACK SESSION|- on|off``: wait (≤ 30 s) until the switches the process
  obeys say so → ``{"ok": bool}``;
- ``edits SESSION``: wait (≤ 30 s) until an operator's state edit for SESSION has reached the
  process → ``{"ok": bool}``;
- ``quit``: flush the spans and exit.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
sys.path.append(str(ROOT))  # after site-packages: the venv's packages win

from agentdash.client import connect  # noqa: E402


def load_agent_module() -> Any:
    path = ROOT / "tests" / "agentdash" / "ingest" / "adk_agent.py"
    spec = importlib.util.spec_from_file_location("adk_agent", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def say(found: dict[str, Any]) -> None:
    print(json.dumps(found), flush=True)


async def main() -> None:
    from google.adk.runners import InMemoryRunner
    from google.adk.tools import FunctionTool
    from google.genai import types

    app = load_agent_module()
    agent = app.build_agent()
    # The instruction names a state key, and a second callback of the app's records each
    # model call's system instruction: what the next turn sees of an operator's edit.
    agent.instruction = "Answer with the capital city of the country asked about. City: {city?}"
    instructions: list[str] = []

    def record_instruction(callback_context: Any, llm_request: Any) -> None:
        instructions.append(str(llm_request.config.system_instruction or ""))

    agent.before_model_callback = [agent.before_model_callback, record_instruction]
    received: list[str] = []

    def get_capital_city(country: str) -> dict[str, str]:
        """Return the capital city of a country."""
        received.append(country)
        return dict(app.get_capital_city(country))

    def needs_confirmation(country: str) -> bool:
        return country == "Japan"

    agent.tools = [FunctionTool(get_capital_city, require_confirmation=needs_confirmation)]
    controls = connect(
        agent, url=os.environ["AGENTDASH_URL"], key=os.environ["AGENTDASH_INGEST_KEY"],
        poll_s=0.2,
    )  # fmt: skip
    say({"connected": controls.connected.wait(30)})
    runner = InMemoryRunner(agent=agent, app_name=app.APP_NAME)
    known: set[str] = set()

    async def turn(session_id: str, country: str) -> dict[str, Any]:
        if session_id not in known:
            await runner.session_service.create_session(
                app_name=app.APP_NAME, user_id=app.USER_ID, session_id=session_id
            )
            known.add(session_id)
        before = len(received)
        text = f"What is the capital of {country}?"
        message = types.Content(role="user", parts=[types.Part(text=text)])
        answer = ""
        async for event in runner.run_async(
            user_id=app.USER_ID, session_id=session_id, new_message=message
        ):
            if event.content and event.content.parts and event.content.parts[0].text:
                answer = event.content.parts[0].text
        session = await runner.session_service.get_session(
            app_name=app.APP_NAME, user_id=app.USER_ID, session_id=session_id
        )
        calls = session.state.get("model_calls", 0) if session else None
        return {"answer": answer, "model_calls": calls, "instruction": instructions[-1],
                "received": received[before:]}  # fmt: skip

    background: asyncio.Task[dict[str, Any]] | None = None
    while True:
        line = await asyncio.to_thread(sys.stdin.readline)  # the loop runs turns meanwhile
        if not line:
            break
        words = line.split()
        if not words:
            continue
        if words[0] == "run":
            say(await turn(words[1], words[2] if len(words) > 2 else "France"))
        elif words[0] == "start":
            country = words[2] if len(words) > 2 else "France"
            background = asyncio.create_task(turn(words[1], country))
            say({"started": True})
        elif words[0] == "finish":
            assert background is not None
            say(await background)
        elif words[0] == "waiting":
            say({"waiting": len(controls.pauses.report()["pauses"])})
        elif words[0] == "breakpoints":
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and len(controls.pauses.breakpoints) < int(words[1]):
                await asyncio.sleep(0.05)
            say({"ok": len(controls.pauses.breakpoints) >= int(words[1])})
        elif words[0] == "expect":
            agent_name, callback, session, wanted = words[1:5]
            deadline = time.monotonic() + 30
            scope = None if session == "-" else session
            while time.monotonic() < deadline:
                now = controls.enabled(agent=agent_name, callback=callback, session=scope)
                if now == (wanted == "on"):
                    break
                await asyncio.sleep(0.05)
            say({"ok": now == (wanted == "on")})
        elif words[0] == "edits":
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not controls._edits.get(words[1]):
                await asyncio.sleep(0.05)
            say({"ok": bool(controls._edits.get(words[1]))})
        elif words[0] == "quit":
            break
    controls.stop()
    from opentelemetry import trace

    provider = trace.get_tracer_provider()
    getattr(provider, "force_flush", lambda: None)()
    say({"bye": True})


if __name__ == "__main__":
    asyncio.run(main())
