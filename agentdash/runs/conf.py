"""The runs app's settings: keys of ``AGENTDASH`` with their documented defaults.

- ``EXECUTOR`` (``"inline"``): ``inline`` (runs on the ASGI server's loop) or ``celery``.
- ``INLINE_CONCURRENCY`` (8): runs at once on the inline executor's loop.
- ``RUN_HEARTBEAT_S`` (2.0): how often a running run writes ``heartbeat_at`` and checks
  whether it was asked to stop.
- ``RUN_STALE_AFTER_S`` (30.0): a running run whose heartbeat is older has lost its worker.
- ``RUN_MAX_ATTEMPTS`` (3): attempts before the reaper fails a run instead of re-queueing it.
- ``RUN_REQUEUE_AFTER_S`` (60.0): a queued run nobody took for this long is submitted again.
- ``REAPER_INTERVAL_S`` (5.0): how often each executor process reaps.
"""

from __future__ import annotations

from typing import Any

from agentdash.conf import agentdash_setting

EXECUTORS = ("inline", "celery")

DEFAULTS: dict[str, Any] = {
    "EXECUTOR": "inline",
    "INLINE_CONCURRENCY": 8,
    "RUN_HEARTBEAT_S": 2.0,
    "RUN_STALE_AFTER_S": 30.0,
    "RUN_MAX_ATTEMPTS": 3,
    "RUN_REQUEUE_AFTER_S": 60.0,
    "REAPER_INTERVAL_S": 5.0,
}


def run_setting(key: str) -> Any:
    """``settings.AGENTDASH[key]``, else this module's default for it."""
    value = agentdash_setting(key)
    return DEFAULTS[key] if value is None else value
