"""An any-agent app under AgentDash's controls, driven line by line on stdin by
``test_remote_any_agent.py`` (run in the any-agent venv of bench/sender_fixtures.py: the real
any-agent 1.18, tinyagent, the model through any-llm against senders/fake_openai.py). Its
config has one callback of its own, ``CountLlmCalls``, which counts model calls; the config
is put under the controls with ``connect(config, url=..., key=...)`` before the agent is made.

Commands (one JSON line answers each): ``run`` → ``{"answer", "llm_calls", "received"}``
(the count so far, the cities the tool received in the run, or ``stopped``: why the run
ended early); ``start`` begins the same run in a thread → ``{"started"}``, ``finish`` waits
for it → what ``run`` answers; ``breakpoints N`` waits (≤ 30 s) until the process knows N
breakpoints → ``{"ok"}``; ``expect AGENT CALLBACK on|off`` (a global switch) → ``{"ok"}``;
``quit``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

# The answers alone on stdout: any-agent's default callbacks print spans to the console.
ANSWERS = sys.stdout
sys.stdout = sys.stderr

ROOT = Path(__file__).resolve().parents[3]
sys.path.append(str(ROOT))  # after site-packages: the venv's packages win
sys.path.append(str(ROOT / "tests" / "agentdash" / "ingest" / "senders"))

from any_agent import AgentCancel, AgentConfig, AnyAgent  # noqa: E402
from any_agent.callbacks import Callback, Context, get_default_callbacks  # noqa: E402
from fake_openai import serve  # noqa: E402

from agentdash.client import connect  # noqa: E402

CALLS = {"llm": 0}
RECEIVED: list[str] = []


class CountLlmCalls(Callback):
    def before_llm_call(self, context: Context, *args: object, **kwargs: object) -> Context:
        CALLS["llm"] += 1
        return context


def get_weather(city: str) -> dict[str, object]:
    """The weather in a city now.

    Args:
        city: The city's name.
    """
    RECEIVED.append(city)
    return {"city": city, "sky": "sunny"}


def say(found: dict[str, object]) -> None:
    print(json.dumps(found), file=ANSWERS, flush=True)


config = AgentConfig(
    model_id="openai:gpt-4o-mini",
    name="weather_agent",
    instructions="You answer questions about the weather.",
    tools=[get_weather],
    api_base=serve(),
    api_key="sk-fake",
    callbacks=[CountLlmCalls(), *get_default_callbacks()],
)
controls = connect(
    config, url=os.environ["AGENTDASH_URL"], key=os.environ["AGENTDASH_INGEST_KEY"], poll_s=0.2
)
say({"connected": controls.connected.wait(30)})
agent = AnyAgent.create("tinyagent", config)


def run() -> dict[str, object]:
    before = len(RECEIVED)
    try:
        trace = agent.run("What is the weather in Paris?")
    except AgentCancel as stopped:
        return {"stopped": str(stopped), "llm_calls": CALLS["llm"], "received": RECEIVED[before:]}
    return {"answer": str(trace.final_output), "llm_calls": CALLS["llm"],
            "received": RECEIVED[before:]}  # fmt: skip


background: list[dict[str, object]] = []
runner: threading.Thread | None = None
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "run":
        say(run())
    elif words[0] == "start":
        background.clear()
        runner = threading.Thread(target=lambda: background.append(run()))
        runner.start()
        say({"started": True})
    elif words[0] == "finish":
        assert runner is not None
        runner.join(120)
        say(background[0] if background else {"stopped": "still running"})
    elif words[0] == "breakpoints":
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(controls.pauses.breakpoints) < int(words[1]):
            time.sleep(0.05)
        say({"ok": len(controls.pauses.breakpoints) >= int(words[1])})
    elif words[0] == "expect":
        name, callback, wanted = words[1:4]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            now = controls.enabled(agent=name, callback=callback, session=None)
            if now == (wanted == "on"):
                break
            time.sleep(0.05)
        say({"ok": now == (wanted == "on")})
    elif words[0] == "quit":
        break
controls.stop()
from opentelemetry import trace as otel_trace  # noqa: E402

getattr(otel_trace.get_tracer_provider(), "force_flush", lambda: None)()
say({"bye": True})
