"""The seam between runs and whoever streams them live: what a run tells it, what it waits
for.

The runs app sits below the live pipeline (docs/ARCHITECTURE.md) and never imports it. A
process that runs agents calls the functions here; they go to the :class:`RunStream`
registered with :func:`run_stream_register` — the live app registers the pipeline's when
Django starts (``LiveConfig.ready``). With none registered, runs go on unstreamed. The
database is the truth and websocket messages are a fast path, so a failing stream never fails
a run: each call is logged and skipped. Changes need no call from here: every one recorded
with ``session_change_next`` (a stored event, a span, a run's status) announces itself when
its transaction commits (:mod:`agentdash.changes.announcements`).
"""

from __future__ import annotations

import logging
from typing import Protocol

logger = logging.getLogger(__name__)


class RunStream(Protocol):
    """What streaming runs live takes (the live app's pipeline implements it)."""

    def start(self) -> None:
        """Begin streaming this process's runs (idempotent), on the running event loop."""

    async def stop(self) -> None:
        """Send what waits, then stop (tests, shutdown)."""

    def run_started(self, *, session_id: str, invocation_id: str, run_id: int) -> None:
        """A run of this process began: its session and invocation are stored (its spans
        can be told at once, without looking them up)."""

    async def publish_partial(
        self, *, session_id: str, run_id: int, invocation_id: str, author: str, text: str
    ) -> None:
        """Send streamed model text to the session's clients (never stored)."""

    async def backpressure(self) -> None:
        """Return once the stream can take more (a run calls it between its events)."""

    async def settle(self, invocation_id: str) -> None:
        """Return (soon) once the invocation's spans are stored."""

    def run_ended(self, *, session_id: str) -> None:
        """A run of this process that :meth:`run_started` told is over — its outcome
        recorded (ended, or waiting for a person), or given up: what waits to be sent goes
        now, without lingering for more of a step."""


class Unstreamed:
    """The stream of a process with no live pipeline: nothing is sent, nothing waits."""

    def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    def run_started(self, *, session_id: str, invocation_id: str, run_id: int) -> None:
        return None

    async def publish_partial(
        self, *, session_id: str, run_id: int, invocation_id: str, author: str, text: str
    ) -> None:
        return None

    async def backpressure(self) -> None:
        return None

    async def settle(self, invocation_id: str) -> None:
        return None

    def run_ended(self, *, session_id: str) -> None:
        return None


_stream: RunStream = Unstreamed()


def run_stream_register(stream: RunStream | None) -> None:
    """Stream this process's runs through ``stream`` (``None``: through none)."""
    global _stream
    _stream = Unstreamed() if stream is None else stream


def run_stream() -> RunStream:
    """The registered stream."""
    return _stream


def start() -> None:
    """Start streaming (the run host calls it on its loop)."""
    try:
        _stream.start()
    except Exception:
        logger.exception("the live stream did not start; runs go on without streaming")


async def stop() -> None:
    """Flush and stop the stream, wherever it runs (tests, shutdown)."""
    try:
        await _stream.stop()
    except Exception:
        logger.exception("the live stream did not stop cleanly")


def run_started(*, session_id: str, invocation_id: str, run_id: int) -> None:
    """Tell the stream a run of this process began (its session and invocation are stored)."""
    try:
        _stream.run_started(session_id=session_id, invocation_id=invocation_id, run_id=run_id)
    except Exception:
        logger.exception("telling the live stream of run %s failed", run_id)


async def publish_partial(
    *, session_id: str, run_id: int, invocation_id: str, author: str, text: str
) -> None:
    """Send streamed model text to the session's clients (never stored)."""
    if not text:
        return
    try:
        await _stream.publish_partial(
            session_id=session_id,
            run_id=run_id,
            invocation_id=invocation_id,
            author=author,
            text=text,
        )
    except Exception:
        logger.exception("publishing a partial failed for session %s", session_id)


async def backpressure() -> None:
    """Wait while the stream is behind (a run calls it between its events)."""
    try:
        await _stream.backpressure()
    except Exception:
        logger.exception("the live stream's backpressure failed")


async def settle(invocation_id: str) -> None:
    """Wait (briefly) until the run's spans are stored, before its outcome is recorded."""
    try:
        await _stream.settle(invocation_id)
    except Exception:
        logger.exception("waiting for the spans of %s failed", invocation_id)


def run_ended(*, session_id: str) -> None:
    """A run that :func:`run_started` told is over (its outcome recorded, or given up): what
    waits is sent now, without lingering for more."""
    try:
        _stream.run_ended(session_id=session_id)
    except Exception:
        logger.exception("hurrying the live stream failed")
