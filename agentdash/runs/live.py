"""The runs app's only door to the live pipeline and the control listener (agentdash.timeline).

Executors and the worker call these functions and nothing of the timeline app directly. The
database is the truth and websocket messages are a fast path, so a failing pipeline never
fails a run: each call is logged and skipped. Changes need no poke from here: every one
recorded with ``session_change_next`` (a stored event, a span, a run's status) announces
itself to the pipeline when its transaction commits.
"""

from __future__ import annotations

import logging

from agentdash.controls.switchboard import DatabaseSwitchboard
from agentdash.timeline import live as timeline_live
from agentdash.timeline.control_listener import run_control_listener

logger = logging.getLogger(__name__)


def start() -> None:
    """Install the live span processor and start the pipeline's flusher (on the running
    loop, or on a loop of its own with a network channel layer: ``LivePipeline.launch``)."""
    try:
        timeline_live.live_pipeline().install().launch()
    except Exception:
        logger.exception("the live pipeline did not start; runs go on without streaming")


async def stop() -> None:
    """Flush and stop the pipeline's flusher, wherever it runs (tests, shutdown)."""
    try:
        await timeline_live.live_pipeline().stop()
    except Exception:
        logger.exception("the live pipeline did not stop cleanly")


async def publish_partial(
    *, session_id: str, run_id: int, invocation_id: str, author: str, text: str
) -> None:
    """Send streamed model text to the session's clients (never stored)."""
    if not text:
        return
    try:
        await timeline_live.publish_partial(
            session_id=session_id,
            run_id=run_id,
            invocation_id=invocation_id,
            author=author,
            text=text,
        )
    except Exception:
        logger.exception("publishing a partial failed for session %s", session_id)


async def backpressure() -> None:
    """Wait while the pipeline is behind (a run calls it between its events)."""
    try:
        await timeline_live.backpressure()
    except Exception:
        logger.exception("the live pipeline's backpressure failed")


async def settle(invocation_id: str) -> None:
    """Wait (briefly) until the run's spans are stored, before its outcome is recorded."""
    try:
        await timeline_live.settle(invocation_id)
    except Exception:
        logger.exception("waiting for the spans of %s failed", invocation_id)


async def control_listener(switchboard: DatabaseSwitchboard) -> None:
    """Keep ``switchboard`` current with the switch changes pushed over the channel layer
    (and a reload from the database now and then), until cancelled."""
    await run_control_listener(switchboard)
