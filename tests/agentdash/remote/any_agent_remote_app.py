"""An any-agent app under AgentDash's controls, driven line by line on stdin by
``test_remote_any_agent.py`` (run in the any-agent venv of bench/sender_fixtures.py: the real
any-agent 1.18, tinyagent, the model through any-llm against senders/fake_openai.py). Its
config has one callback of its own, ``CountLlmCalls``, which counts model calls; the config
is put under the controls with ``connect(config, url=..., key=...)`` before the agent is made.

Commands (one JSON line answers each): ``run`` → ``{"answer", "llm_calls"}`` (the count so
far); ``expect AGENT CALLBACK on|off`` (a global switch) → ``{"ok"}``; ``quit``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

# The answers alone on stdout: any-agent's default callbacks print spans to the console.
ANSWERS = sys.stdout
sys.stdout = sys.stderr

ROOT = Path(__file__).resolve().parents[3]
sys.path.append(str(ROOT))  # after site-packages: the venv's packages win
sys.path.append(str(ROOT / "tests" / "agentdash" / "ingest" / "senders"))

from any_agent import AgentConfig, AnyAgent  # noqa: E402
from any_agent.callbacks import Callback, Context, get_default_callbacks  # noqa: E402
from fake_openai import serve  # noqa: E402

from agentdash.client import connect  # noqa: E402

CALLS = {"llm": 0}


class CountLlmCalls(Callback):
    def before_llm_call(self, context: Context, *args: object, **kwargs: object) -> Context:
        CALLS["llm"] += 1
        return context


def get_weather(city: str) -> dict[str, object]:
    """The weather in a city now.

    Args:
        city: The city's name.
    """
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
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "run":
        trace = agent.run("What is the weather in Paris?")
        say({"answer": str(trace.final_output), "llm_calls": CALLS["llm"]})
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
