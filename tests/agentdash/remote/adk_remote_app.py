"""A google-adk app under AgentDash's controls, driven line by line on stdin by
``test_remote_adk.py`` (run by ``bench/.venv-adk/bin/python``: the real google-adk, its own
venv). The agent is ``tests/agentdash/ingest/adk_agent.py``'s (an offline model, a tool, a
``before_model`` callback that counts model calls in session state), put under the controls
with the three lines the README shows: ``connect(agent, url=..., key=...)``.

Commands (one JSON line answers each):

- ``run SESSION``: one turn on ADK session SESSION (made on first use) → ``{"answer",
  "model_calls"}`` (the callback's count in the session's state);
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
    controls = connect(
        agent, url=os.environ["AGENTDASH_URL"], key=os.environ["AGENTDASH_INGEST_KEY"],
        poll_s=0.2,
    )  # fmt: skip
    say({"connected": controls.connected.wait(30)})
    runner = InMemoryRunner(agent=agent, app_name=app.APP_NAME)
    known: set[str] = set()
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "run":
            session_id = words[1]
            if session_id not in known:
                await runner.session_service.create_session(
                    app_name=app.APP_NAME, user_id=app.USER_ID, session_id=session_id
                )
                known.add(session_id)
            message = types.Content(role="user", parts=[types.Part(text=app.QUESTIONS[0])])
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
            say({"answer": answer, "model_calls": calls, "instruction": instructions[-1]})
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
