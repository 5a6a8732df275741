"""Supervision of a process's background services: whatever stops one, it starts again.

:func:`supervise` runs a service (a coroutine factory) for as long as its task lives. When
the service raises, returns, or is cancelled from inside (anything but the cancellation of
the supervising task itself), it is logged and started again after a pause that doubles from
``BACKOFF_FIRST_S`` to ``BACKOFF_MAX_S`` and falls back to the first after the service ran
``HEALTHY_AFTER_S`` without stopping. Each service's :class:`ServiceState` says what it is
doing, how often it was restarted and why it last stopped; the run host hands these to the
health record (:mod:`agentdash.runs.health`).

No Django here: a supervisor only needs an event loop.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from agentdash.core.tasks import cancellation_kept

logger = logging.getLogger(__name__)

BACKOFF_FIRST_S = 0.5
BACKOFF_MAX_S = 30.0
HEALTHY_AFTER_S = 60.0
ERROR_LIMIT = 500

STARTING = "starting"
RUNNING = "running"
RESTARTING = "restarting"
STOPPED = "stopped"


@dataclass
class Backoff:
    """Pauses before restarts: ``first``, doubling up to ``most``; back to ``first`` once a
    service ran ``healthy_after`` seconds."""

    first: float = BACKOFF_FIRST_S
    most: float = BACKOFF_MAX_S
    healthy_after: float = HEALTHY_AFTER_S


@dataclass
class ServiceState:
    """What one supervised service is doing. ``since`` is the wall-clock time of the last
    change of ``state``; ``last_error`` says why it last stopped (empty: never)."""

    name: str
    state: str = STARTING
    restarts: int = 0
    last_error: str = ""
    since: float = field(default_factory=time.time)

    def set(self, state: str, *, error: str | None = None) -> None:
        self.state, self.since = state, time.time()
        if error is not None:
            self.last_error = error[:ERROR_LIMIT]

    def as_dict(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "restarts": self.restarts,
            "last_error": self.last_error,
            "since": self.since,
        }


async def supervise(
    factory: Callable[[], Coroutine[Any, Any, None]],
    state: ServiceState,
    *,
    backoff: Backoff | None = None,
    changed: Callable[[], None] | None = None,
) -> None:
    """Run ``factory()`` until this task is cancelled, starting it again whenever it stops.

    ``state`` follows it (``running`` / ``restarting``, restarts, the last error) and
    ``changed()`` is called after each change. Every stop is logged with its reason (the
    traceback once per kind of error, not on every retry of the same failure), every restart
    too. Never returns; raises ``CancelledError`` when cancelled (``state`` is then
    ``stopped``).
    """
    backoff = backoff or Backoff()
    me = asyncio.current_task()
    assert me is not None
    loop = asyncio.get_running_loop()
    pause = backoff.first
    last_kind = ""
    notify = changed or (lambda: None)
    try:
        while True:
            state.set(RUNNING)
            notify()
            began = loop.time()
            trace: BaseException | None
            try:
                await factory()
                error, kind, trace = "returned (a service should run until stopped)", "", None
            except asyncio.CancelledError as exc:
                if me.cancelling():
                    raise  # we are being stopped
                error, kind, trace = "cancelled from inside", "CancelledError", exc
            except Exception as exc:
                error, kind, trace = f"{type(exc).__name__}: {exc}", type(exc).__name__, exc
            cancellation_kept()  # stopped while it ran, but a library swallowed the request
            if loop.time() - began >= backoff.healthy_after:
                pause, last_kind = backoff.first, ""
            state.restarts += 1
            state.set(RESTARTING, error=error)
            notify()
            logger.error(
                "background service %s stopped: %s; restarting in %.1f s (restart %d)",
                state.name,
                error,
                pause,
                state.restarts,
                exc_info=trace if kind != last_kind else None,
            )
            last_kind = kind
            await asyncio.sleep(pause)
            pause = min(pause * 2, backoff.most)
            logger.warning("background service %s restarting", state.name)
    finally:
        state.set(STOPPED)
        notify()
