"""OTLP trace exports prepared (``prepared.prepare``: parsed, unpacked, made storable) in
processes of their own, so that a server uses a second core for ingest: reading a batch is
pure work on values, a third of what a span costs the serving process, and while one batch
is read there the serving process stores and publishes the one before it. The single writer
SQLite asks for is kept: only the serving process touches the database.

``AGENTDASH_INGEST_DECODE_PROCESSES`` says how many (0: prepare in the serving process, as on a
machine of one CPU). The processes are started on the first export, in the background:
exports are prepared in the serving process until they are ready. A process that dies (killed,
out of memory on a hostile body) loses nothing: the export it held is prepared in the serving
process instead, and new processes start :data:`RETRY_S` later.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING

import django

from agentdash.core.conf import agentdash_setting
from agentdash.core.gc_tuning import gc_tune
from agentdash.core.metrics import INGEST_EXPORTS_READ

if TYPE_CHECKING:
    from agentdash.ingest.prepared import Prepared

logger = logging.getLogger(__name__)
RETRY_S = 10.0  # after processes stopped or could not start, before new ones are started
PARENT_CHECK_S = 1.0  # how often a decoding process checks that its server still runs


def _child_start(server: int, gc_threshold: int) -> None:
    # A process of its own, started fresh ("spawn": the serving process has threads, which a
    # fork would copy mid-step). Django is set up for the models the span store's names come
    # from; no database is opened here.
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # ^C is for the server: it stops us
    threading.Thread(target=_end_with, args=(server,), name="decoder-parent", daemon=True).start()
    django.setup()
    from agentdash.ingest import prepared  # noqa: F401 (imported once, not per export)

    gc_tune(threshold=gc_threshold)


def _end_with(server: int) -> None:
    # A server killed outright (SIGKILL, out of memory) does not always end its pool's
    # processes (one was seen to outlive it, waiting on its queue): it leaves us to another
    # parent, and then we go.
    while os.getppid() == server:
        time.sleep(PARENT_CHECK_S)
    os._exit(0)


def _child_ready() -> int:
    return os.getpid()


def _child_prepare(data: bytes, kind: str, max_value_chars: int, part: tuple[int, int]) -> Prepared:
    from agentdash.ingest.prepared import prepare

    return prepare(data, kind, max_value_chars=max_value_chars, part=part)


class Decoders:
    """The pool of decoding processes of this server process (:data:`decoders`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None
        self._ready: Future[int] | None = None
        self._size = 0
        self._retry_at = 0.0

    def prepared(
        self, data: bytes, kind: str, *, max_value_chars: int, processes: int, alone: bool = False
    ) -> Prepared:
        """``data`` prepared, in a decoding process when one is ready, else here;
        ``IngestRefused`` (400) when it cannot be read. ``alone``: no other export is in
        hand, so this process would only wait — it reads the first half meanwhile."""
        from agentdash.ingest.prepared import joined, prepare

        pool = self._pool_ready(processes)
        if pool is not None:
            try:
                if alone:
                    there = pool.submit(_child_prepare, data, kind, max_value_chars, (1, 2))
                    first = prepare(data, kind, max_value_chars=max_value_chars, part=(0, 2))
                    prepared = joined([first, there.result()])
                else:
                    whole = pool.submit(_child_prepare, data, kind, max_value_chars, (0, 1))
                    prepared = whole.result()
            except BrokenProcessPool:
                self._drop(pool, "a decoding process stopped")
            else:
                INGEST_EXPORTS_READ.labels("split" if alone else "decoder").inc()
                return prepared
        INGEST_EXPORTS_READ.labels("server").inc()
        return prepare(data, kind, max_value_chars=max_value_chars)

    def started(self, processes: int, *, timeout: float) -> list[int]:
        """Start ``processes`` decoding processes if they are not running, wait up to
        ``timeout`` seconds for them to be ready, and say which run (none: not ready)."""
        if processes <= 0:
            return []
        with self._lock:
            if self._pool is None or self._size != processes:
                self._start(processes)
            ready = self._ready
        if ready is not None:
            with contextlib.suppress(Exception):
                ready.result(timeout=timeout)
        return self.pids()

    def pids(self) -> list[int]:
        """The decoding processes running now."""
        with self._lock:
            pool = self._pool
        processes = getattr(pool, "_processes", None) or {}
        return sorted(pid for pid, process in processes.items() if process.is_alive())

    def stop(self) -> None:
        """Stop the decoding processes (the next export starts new ones)."""
        with self._lock:
            pool, self._pool, self._ready = self._pool, None, None
            self._retry_at = 0.0
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def _pool_ready(self, processes: int) -> ProcessPoolExecutor | None:
        if processes <= 0:
            return None
        with self._lock:
            if self._pool is None and time.monotonic() < self._retry_at:
                return None
            if self._pool is None or self._size != processes:
                self._start(processes)
            ready, pool = self._ready, self._pool
        if ready is None or not ready.done():
            return None  # starting: this export is prepared here
        if ready.exception() is not None:
            self._drop(pool, f"decoding processes could not start: {ready.exception()!r}")
            return None
        return pool

    def _start(self, processes: int) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        self._size = processes
        self._pool = ProcessPoolExecutor(
            max_workers=processes,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_child_start,
            initargs=(os.getpid(), agentdash_setting("GC_THRESHOLD")),
        )
        self._ready = self._pool.submit(_child_ready)

    def _drop(self, pool: ProcessPoolExecutor | None, why: str) -> None:
        logger.warning("OTLP ingest: %s; exports are read in the serving process meanwhile", why)
        with self._lock:
            if pool is not None and self._pool is pool:
                self._pool, self._ready = None, None
                self._retry_at = time.monotonic() + RETRY_S
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


decoders = Decoders()
