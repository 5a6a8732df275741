"""Starting this process's run host from the first request: daphne has no lifespan events.

Without it a daphne process would start its background services (the reaper, the health
record and, in the embedded mode, the control listener and the executor) only with its first
websocket or chat message: a freshly started or idle one would neither reap nor show in
``manage.py health``. Any first request does now — a load balancer's ``/health/`` included.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from agentdash.runs.executors import executor_start

logger = logging.getLogger(__name__)


class RunHostStarter:
    """ASGI middleware: before the first request on each event loop is served, this
    process's executor and run host are started (idempotent; a failure is logged and tried
    again with the next request)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self._started_on: asyncio.AbstractEventLoop | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            loop = asyncio.get_running_loop()
            if self._started_on is not loop:
                try:
                    await executor_start()
                    self._started_on = loop
                except Exception:
                    logger.exception("starting this process's run host failed; trying again")
        await self.app(scope, receive, send)
