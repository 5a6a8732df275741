"""This process's run loop: the one event loop agent runs execute on, and its services.

In daphne (inline executor) it is the server's own loop, adopted the first time async code
starts the executor; in a Celery worker process it is a loop of its own in a daemon thread.
Either way one loop runs many agent runs at once and, beside them, the services a run needs:
the process-wide :class:`DatabaseSwitchboard` (loaded at start), the live stream
(:mod:`agentdash.runs.streaming`), and the background services registered with
:meth:`RunHost.service_register` — ``RunsConfig.ready`` registers the control listener,
which keeps the switchboard current (where runs execute), and, in every process that starts
a host, the reaper and the health record. Each service is supervised
(:mod:`agentdash.runs.supervisor`): whatever stops it, it is started again, with backoff, and
its state is what the health record writes.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from functools import partial
from typing import Any

from asgiref.sync import SyncToAsync

from agentdash.controls.switchboard import DatabaseSwitchboard
from agentdash.core.loop_thread import LoopThread
from agentdash.core.tasks import tasks_ended
from agentdash.runs import streaming
from agentdash.runs.supervisor import Backoff, ServiceState, supervise

logger = logging.getLogger(__name__)

START_TIMEOUT_S = 60.0

ServiceFactory = Callable[["RunHost"], Coroutine[Any, Any, None]]


@dataclass(frozen=True)
class _Service:
    factory: ServiceFactory
    runs_only: bool
    backoff: Backoff | None


class RunHost:
    """The loop and the background services of this process (one instance: :func:`run_host`).

    ``astart`` adopts the running loop (unless another live loop is already the host's);
    ``start_thread`` makes a loop in a daemon thread. The live stream and the services
    registered with ``runs_only=False`` always start; with ``runs=True`` the services for
    executing runs start too (the switchboard's first load, then the other registered
    services). Starting again is a no-op; concurrent starters wait for the first.
    """

    def __init__(self) -> None:
        self.switchboard = DatabaseSwitchboard()
        self.worker_name = f"{socket.gethostname()}:{os.getpid()}"
        self._registered: dict[str, _Service] = {}
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: LoopThread | None = None
        self._started: dict[str, asyncio.Future[None]] = {}
        self._services: list[asyncio.Task[None]] = []
        self._states: dict[str, ServiceState] = {}
        self._changed: asyncio.Event | None = None

    def service_register(
        self,
        name: str,
        factory: ServiceFactory,
        *,
        runs_only: bool = True,
        backoff: Backoff | None = None,
    ) -> None:
        """Run ``factory(host)`` as background service ``name`` wherever this host starts
        with ``runs=True`` — or, with ``runs_only=False``, wherever it starts at all (again
        under the same name: replaced). Register before the host starts
        (``AppConfig.ready``). The service is supervised: when it stops, for any reason, it
        is logged and ``factory(host)`` runs again after ``backoff`` (the supervisor's
        default: 0.5 s doubling to 30 s)."""
        with self._lock:
            self._registered[name] = _Service(factory, runs_only, backoff)

    @property
    def runs_agents(self) -> bool:
        """Whether this host has started to execute runs (``runs=True``)."""
        return "runs" in self._started

    def service_states(self) -> dict[str, ServiceState]:
        """The state of each service started here, by name (read on the host loop)."""
        return dict(self._states)

    async def service_changed(self, timeout: float) -> bool:
        """Wait (on the host loop) until a service's state changes, at most ``timeout``
        seconds; True if one did."""
        if self._changed is None:
            self._changed = asyncio.Event()
        try:
            async with asyncio.timeout(timeout):
                await self._changed.wait()
        except TimeoutError:
            return False
        self._changed.clear()
        return True

    def _service_changed(self) -> None:
        if self._changed is not None:
            self._changed.set()

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The host's loop while it is open."""
        loop = self._loop
        return None if loop is None or loop.is_closed() else loop

    async def astart(self, *, runs: bool = True) -> None:
        """Start on the running loop (or, if the host already has another open loop, there)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            host = self.loop
            if host is None:
                host = self._loop = loop
                self._forget()
        if host is not loop:
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._start(runs), host))
            return
        await self._start(runs)

    async def _start(self, runs: bool) -> None:
        # On the host loop only, so the dict needs no lock. Each part starts in a task of its
        # own, which every starter awaits shielded: a starter cancelled meanwhile (a socket
        # closed during its first page) leaves the part starting for the others.
        for name in ("live", "services", "runs") if runs else ("live", "services"):
            started = self._started.get(name)
            if started is None:
                started = asyncio.get_running_loop().create_task(
                    self._start_part(name), name=f"agentdash-host-start-{name}"
                )
                self._started[name] = started
                started.add_done_callback(partial(self._start_ended, name))
            await asyncio.shield(started)

    def _start_ended(self, name: str, started: asyncio.Future[None]) -> None:
        """A part that failed to start is started afresh by the next starter (its error
        retrieved: only the awaiting starters see it)."""
        if (started.cancelled() or started.exception() is not None) and self._started.get(
            name
        ) is started:
            del self._started[name]

    async def _start_part(self, name: str) -> None:
        if name == "live":
            streaming.start()
            return
        if name == "runs":
            try:
                await self.switchboard.arefresh()
            except Exception:  # e.g. before migrate: callbacks all run until a reload works
                logger.exception("loading the callback switches failed")
        with self._lock:
            registered = list(self._registered.items())
        for service, found in registered:
            if found.runs_only == (name == "runs"):
                self.spawn(partial(found.factory, self), name=service, backoff=found.backoff)

    def spawn(
        self,
        factory: Callable[[], Coroutine[Any, Any, None]],
        *,
        name: str,
        backoff: Backoff | None = None,
    ) -> None:
        """Run ``factory()`` as background service ``name`` on the host loop, supervised
        (started again whenever it stops), until :meth:`astop` (call on the loop)."""
        state = self._states[name] = ServiceState(name)
        if self._changed is None:  # made on the host loop, before any change to report
            self._changed = asyncio.Event()
        coro = supervise(factory, state, backoff=backoff, changed=self._service_changed)
        self._services.append(asyncio.get_running_loop().create_task(coro, name=name))

    def _forget(self) -> None:
        # A new loop: what ran on the old one (closed with it) is void. Under self._lock.
        self._started, self._services, self._states, self._changed = {}, [], {}, None

    def start_thread(self, *, runs: bool = True) -> asyncio.AbstractEventLoop:
        """Give the host a loop of its own in a daemon thread (if it has none) and start its
        services there; returns when they have started. For processes with no loop of their
        own (Celery workers, management commands); never call it from the host loop."""
        with self._lock:
            loop = self.loop
            if loop is None:
                self._thread = LoopThread("agentdash-run-loop")
                loop = self._loop = self._thread.loop
                self._forget()
        asyncio.run_coroutine_threadsafe(self._start(runs), loop).result(START_TIMEOUT_S)
        return loop

    def ensure_loop(self, *, runs: bool = True) -> asyncio.AbstractEventLoop:
        """The host loop, from any thread: the current one; else, in a thread that async code
        called into (``sync_to_async``), that code's loop; else a loop of our own."""
        loop = self.loop
        if loop is not None:
            return loop
        caller = getattr(SyncToAsync.threadlocal, "main_event_loop", None)
        pid = getattr(SyncToAsync.threadlocal, "main_event_loop_pid", None)
        if caller is not None and pid == os.getpid() and not caller.is_closed():
            with self._lock:
                if self.loop is None:
                    self._loop = caller
                    self._forget()
            asyncio.run_coroutine_threadsafe(self.astart(runs=runs), caller)
            return self.loop or caller
        return self.start_thread(runs=runs)

    async def astop(self) -> None:
        """Stop the services and forget the loop (call on the host loop; tests, shutdown)."""
        services, self._services = self._services, []
        await tasks_ended(services)
        if "live" in self._started:
            await streaming.stop()
        with self._lock:
            self._loop, self._started, self._states, self._changed = None, {}, {}, None

    def stop_thread(self) -> None:
        """Stop a loop made by :meth:`start_thread` (from another thread)."""
        loop, own = self.loop, self._thread
        if loop is None or own is None:
            return
        asyncio.run_coroutine_threadsafe(self.astop(), loop).result(START_TIMEOUT_S)
        own.stop(START_TIMEOUT_S)
        self._thread = None


_host = RunHost()


def run_host() -> RunHost:
    """This process's run host."""
    return _host
