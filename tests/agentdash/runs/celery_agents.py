"""The agent the Celery tests run in a real worker process (``AGENTDASH_AGENTS`` names it).

Its tool waits while the file ``hold`` (or ``hold-<topic>``, for the topic asked) exists in
``AGENTDASH_TEST_GATE_DIR`` and leaves an ``entered-<pid>`` (and ``entered-<topic>-<pid>``)
file there when called, so a test can catch a worker inside it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from runtime import Agent


def _gate() -> Path:
    return Path(os.environ.get("AGENTDASH_TEST_GATE_DIR", "/nonexistent"))


def look_up_topic(topic: str) -> dict[str, Any]:
    """Looks up a topic in the library and returns what it says about it.

    Args:
      topic: the topic to look up, e.g. "tea".
    """
    gate = _gate()
    if gate.is_dir():
        (gate / f"entered-{os.getpid()}").touch()
        (gate / f"entered-{topic}-{os.getpid()}").touch()
        while (gate / "hold").exists() or (gate / f"hold-{topic}").exists():
            time.sleep(0.05)
    return {"result": f"The library says {topic} is worth knowing about."}


root_agent = Agent(
    name="celery_agent",
    model="offline",
    description="Looks topics up in the library.",
    instruction="Look the topic up with the look_up_topic tool, then answer in one sentence.",
    tools=[look_up_topic],
    output_key="answer",
)
