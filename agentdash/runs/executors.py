"""Executors: where a queued run's id goes to be executed, chosen by ``AGENTDASH["EXECUTOR"]``.

- ``inline`` (embedded default): :func:`~agentdash.runs.worker.run_execute` as a task on this
  process's run loop — daphne's own loop, adopted lazily (daphne has no lifespan) — at most
  ``INLINE_CONCURRENCY`` at once.
- ``celery`` (scale): a Celery task (``agentdash.runs.tasks.execute_run``) through the Redis
  broker; each worker process runs the runs on one long-lived loop of its own.

``submit`` may be called from any thread and never waits for the run. A run id submitted
twice is harmless: the worker claims a run with a conditional update.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
from typing import Protocol

from celery import current_app
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from agentdash.core.conf import EXECUTORS, agentdash_setting
from agentdash.core.tasks import tasks_ended
from agentdash.runs.host import run_host
from agentdash.runs.tasks import execute_run
from agentdash.runs.worker import run_execute

logger = logging.getLogger(__name__)

CELERY_APP = "agentdash"
"""The name of the project's Celery app (``agentdash/celery_app.py``)."""


class Executor(Protocol):
    name: str

    def submit(self, run_id: int) -> None:
        """Have the run executed, from any thread; returns at once."""

    async def astart(self) -> None:
        """Start what this process needs, on the running loop (the ASGI server's)."""


class InlineExecutor:
    """Runs on this process's run loop, ``concurrency`` at a time; the others wait their turn
    (still ``queued``). A run id already waiting or running here is not taken twice."""

    name = "inline"

    def __init__(self, *, concurrency: int) -> None:
        if concurrency < 1:
            raise ImproperlyConfigured(
                f"AGENTDASH['INLINE_CONCURRENCY'] must be at least 1, not {concurrency}"
            )
        self.concurrency = concurrency
        self._loop: asyncio.AbstractEventLoop | None = None
        self._slots: asyncio.Semaphore | None = None
        self._taken: set[int] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def astart(self) -> None:
        await run_host().astart(runs=True)

    def submit(self, run_id: int) -> None:
        loop = run_host().ensure_loop(runs=True)
        loop.call_soon_threadsafe(self._spawn, run_id)

    def _spawn(self, run_id: int) -> None:  # on the loop
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a new loop (tests): the old one's bookkeeping is void
            self._loop, self._slots, self._taken = loop, asyncio.Semaphore(self.concurrency), set()
        if run_id in self._taken:
            return
        self._taken.add(run_id)
        # A fresh context: the run is the root of its own trace, whoever submitted it.
        task = loop.create_task(
            self._execute(run_id), name=f"agentdash-run-{run_id}", context=contextvars.Context()
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _execute(self, run_id: int) -> None:
        host = run_host()
        try:
            assert self._slots is not None
            async with self._slots:
                await host.astart(runs=True)
                await run_execute(run_id, worker=host.worker_name)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("executing run %s failed; the reaper will take it up", run_id)
        finally:
            self._taken.discard(run_id)

    async def drain(self) -> None:
        """Wait until every run submitted so far has ended (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def astop(self) -> None:
        """Cancel the runs under way here (they stay ``running``; the reaper re-queues them).
        A run whose cancellation a library swallowed is cancelled again (``core/tasks.py``):
        a run paused for an answer would otherwise hold the stop forever."""
        await tasks_ended(list(self._tasks))
        await self.drain()


class CeleryExecutor:
    """Sends each run id to the Celery broker (``agentdash.runs.tasks.execute_run``)."""

    name = "celery"

    async def astart(self) -> None:
        await run_host().astart(runs=False)  # only the live stream: runs are elsewhere

    def submit(self, run_id: int) -> None:
        """Raises ``ImproperlyConfigured`` when the project's Celery app is not loaded in
        this process (the task would go to Celery's default app and its default broker)."""
        if current_app.main != CELERY_APP:
            raise ImproperlyConfigured(
                "the Celery app is not loaded in this process: import agentdash.celery_app in "
                "its entry point (asgi.py and manage.py do)"
            )
        # The queue named each time: Celery caches its default queue at first use.
        execute_run.apply_async((run_id,), queue=settings.CELERY_TASK_DEFAULT_QUEUE)


_lock = threading.Lock()
_executor: Executor | None = None
_pinned: Executor | None = None


def executor_build(name: str) -> Executor:
    """The executor called ``name``; ``ImproperlyConfigured`` for any other name."""
    if name == "inline":
        return InlineExecutor(concurrency=int(agentdash_setting("INLINE_CONCURRENCY")))
    if name == "celery":
        return CeleryExecutor()
    raise ImproperlyConfigured(
        f"AGENTDASH['EXECUTOR'] (AGENTDASH_EXECUTOR) is {name!r}; use one of "
        f"{', '.join(map(repr, EXECUTORS))}."
    )


def executor_get() -> Executor:
    """This process's executor, as configured (built once; :func:`executor_reset` forgets)."""
    global _executor
    with _lock:
        if _pinned is not None:
            return _pinned
        name = str(agentdash_setting("EXECUTOR"))
        if _executor is None or _executor.name != name:
            _executor = executor_build(name)
        return _executor


def executor_set(executor: Executor | None) -> None:
    """Use ``executor`` in this process whatever the settings say (tests); ``None`` goes
    back to the configured one."""
    global _pinned
    with _lock:
        _pinned = executor


def executor_reset() -> None:
    """Forget the built executor, so the next one follows the settings again (tests)."""
    global _executor
    with _lock:
        _executor = None


async def executor_start() -> None:
    """Start this process's executor on the running loop. The ASGI side calls it (through
    ``arun_enqueue``, or early, when a websocket connects): daphne has no lifespan."""
    await executor_get().astart()
