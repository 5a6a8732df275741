"""Executing one run: claim it, run its agent, record the outcome. Every executor calls
:func:`run_execute`; it runs on the process's run loop among many others."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from google.genai import types

from agentdash.agent_sessions.artifact_service import DjangoArtifactService
from agentdash.agent_sessions.memory_service import DjangoMemoryService
from agentdash.core.conf import agentdash_setting
from agentdash.core.outages import caused_by_outage, until_reachable
from agentdash.core.tasks import tasks_ended
from agentdash.core.threads import in_worker_thread
from agentdash.registry.selectors import agent_get
from agentdash.runs import streaming
from agentdash.runs.after_run import Looked, after_run, after_run_looks
from agentdash.runs.confirmation_requests import answer_cancels, invocation_waits
from agentdash.runs.host import run_host
from agentdash.runs.lifecycle import (
    run_cancel_message,
    run_conclude,
    run_heartbeat,
    run_requeue,
    run_usage_told,
)
from agentdash.runs.models import Run
from agentdash.runs.resume import run_resume_prepare
from agentdash.runs.run_start import NO_TRACE, ReadAhead, RunSessionService, run_claim_ahead
from agentdash.runs.waits import run_wait
from runtime import RunConfig, Runner, StreamingMode
from runtime.errors import CallbackError, ModelCallError
from runtime.telemetry.trace_ids import (
    chosen_trace_ids,
    trace_id_chosen,
    trace_id_new,
)

logger = logging.getLogger(__name__)

_HEARTBEATS = ThreadPoolExecutor(2, thread_name_prefix="agentdash-heartbeat")
_TRACE_NOTE = re.compile(r"\btrace ([0-9a-f]{32})\b")


@dataclass
class _Watch:
    """Why the heartbeat stopped the run, if it did: ``"cancel"`` (asked to) or ``"lost"``
    (the run is no longer this attempt's)."""

    stop: str | None = None
    reason: str = ""
    done: bool = False


async def run_execute(run_id: int, *, worker: str) -> None:
    """Execute run ``run_id`` as ``worker`` if it is still queued; if not (another worker has
    it, it finished, it was cancelled), return at once: a duplicate delivery is harmless.

    The run's root agent runs with the database stores and this process's switchboard. A
    heartbeat every ``RUN_HEARTBEAT_S`` keeps the run alive and stops it when a cancel is
    asked for. The outcome is recorded: ``succeeded``; ``cancelled`` with the reason; or
    ``failed`` with the exception's type and message — and for the last two the chat gets an
    event saying so.

    A database outage is waited out (``core.outages.until_reachable``): the claim and the
    outcome are written once the database is back, and a run the outage interrupted is
    queued again and, at once, resumed here as its next attempt (what it stored is kept, as
    after a dead worker), up to ``RUN_MAX_ATTEMPTS``. Nothing a run does raises out of here;
    a failure to record its outcome does (the reaper then takes the run up). Then the hooks
    of ``runs.after_run`` run (the online evaluators), whatever they do leaving the run be.
    """
    looked: Looked = {}  # what the hooks read where the run's end was stored, if they did
    while await _attempt(run_id, worker=worker, looked=looked):
        pass  # queued again after an outage: claim it once more
    await after_run(run_id, looked)  # e.g. the online evaluators; never changes the run


async def _attempt(run_id: int, *, worker: str, looked: Looked) -> bool:
    """One attempt; True when it ended queued again (a database outage interrupted it)."""
    claim = in_worker_thread(run_claim_ahead)
    # The attempt's trace chosen now, when the tracer provider will use it: the claim
    # records it, and no write is left for the first span to make.
    trace_id = trace_id_new() if chosen_trace_ids() else ""
    claimed = await until_reachable(
        lambda: claim(run_id=run_id, worker=worker, trace_id=trace_id),
        what=f"claiming run {run_id}",
    )
    if claimed is None:
        logger.info("run %s is not queued any more: nothing to do", run_id)
        return False
    run, ahead = claimed
    streaming.run_started(session_id=run.session_id, invocation_id=run.invocation_id, run_id=run.pk)
    me = asyncio.current_task()
    assert me is not None
    watch = _Watch()
    beat = asyncio.create_task(_heartbeat(run, watch, me), name=f"agentdash-heartbeat-{run_id}")
    service = RunSessionService(run, read=ahead.session)
    error: BaseException | None = None
    # The heartbeat goes on until the outcome is stored: settling the spans may take seconds
    # under load, and a run that stopped beating would be reaped while it is still alive.
    try:
        try:
            await _drive(run, service, ahead)
            watch.done = True
        except asyncio.CancelledError:
            watch.done = True
            if not _stopped_by_its_heartbeat_alone(me, watch):
                raise  # the process is stopping: the reaper will queue the run again
        except Exception as exc:
            watch.done = True
            error = exc
        await streaming.settle(run.invocation_id)  # clients see the run end after its spans
        if error is not None and watch.stop is None and caused_by_outage(error):
            return await _requeue(run, error)
        await _record(run, service.trace, watch, error, looked)
        return False
    finally:
        streaming.run_ended(session_id=run.session_id)  # what it recorded goes out now
        await tasks_ended([beat])


def _stopped_by_its_heartbeat_alone(me: asyncio.Task[Any], watch: _Watch) -> bool:
    """Whether the cancellation ``me`` caught was its heartbeat's stop alone (asked to, or
    taken from this worker), taken back here so the run records its end; False (``me``
    still cancelled) when the process is stopping too: one ``CancelledError`` can carry
    both requests, and the stop's must not be lost."""
    return watch.stop is not None and me.uncancel() == 0


async def _requeue(run: Run, error: BaseException) -> bool:
    why = f"the database was unreachable ({type(error).__name__}: {error})"
    logger.warning("run %s: %s; queueing it again once it is back", run.pk, why)
    requeue = in_worker_thread(_requeued)
    attempts = int(agentdash_setting("RUN_MAX_ATTEMPTS"))
    status = await until_reachable(
        lambda: requeue(run=run, why=why, max_attempts=attempts, failure_code="RUN_FAILED"),
        what=f"requeueing run {run.pk}",
    )
    return status == Run.Status.QUEUED


def _requeued(*, run: Run, **kwargs: Any) -> str:
    """``run_requeue``; when it wrote nothing (the attempt lost its run meanwhile), the run's
    totals told without it (``_concluded``)."""
    status = run_requeue(run=run, **kwargs)
    if not status:
        run_usage_told(run=run)
    return status


def _concluded(*, run: Run, **kwargs: Any) -> bool:
    """``run_conclude``; when it wrote nothing (the attempt lost its run: reaped), the totals
    its end would have told go in a change of the run as it is (``run_usage_told``) — the
    live pipeline leaves a settling run's totals to its end."""
    wrote = run_conclude(run=run, **kwargs)
    if not wrote:
        run_usage_told(run=run)
    return wrote


def _stored(write: Callable[..., Any], what: str) -> Callable[..., Awaitable[Any]]:
    """``write`` (a lifecycle write) run in a worker thread, waiting out a database outage."""
    call = in_worker_thread(write)

    async def stored(**kwargs: Any) -> Any:
        return await until_reachable(lambda: call(**kwargs), what=what)

    return stored


async def _drive(run: Run, service: RunSessionService, ahead: ReadAhead) -> None:
    agent = ahead.agent or await in_worker_thread(agent_get)(name=run.agent_name)
    runner = Runner(
        agent=agent,
        app_name=agent.name,
        session_service=service,
        artifact_service=DjangoArtifactService(),
        memory_service=DjangoMemoryService(),
        switchboard=run_host().switchboard,
        service_identity=agentdash_setting("SERVICE_IDENTITY"),
        breakpoints=ahead.breakpoints,
    )
    message: types.Content | None = types.Content.model_validate(run.message)
    if run.message_stored:
        message = None  # the session's last event (a fork at a question): answered as it is
    elif run.attempt > 1 and await in_worker_thread(run_resume_prepare)(run=run):
        message = None  # stored by the attempt that died
    events = runner.run_async(
        user_id=run.session.user_id,
        session_id=run.session_id,
        new_message=message,
        run_config=RunConfig(streaming_mode=StreamingMode.SSE),
        invocation_id=run.invocation_id,
    )
    chosen = trace_id_chosen(run.trace_id) if run.trace_id else contextlib.nullcontext()
    async with contextlib.aclosing(events) as stream:
        with chosen as handle:  # the invocation's span, the first span of the run, takes it
            service.chosen = handle
            async for event in stream:
                if event.partial:
                    await streaming.publish_partial(
                        session_id=run.session_id,
                        run_id=run.pk,
                        invocation_id=run.invocation_id,
                        author=event.author,
                        text=event.text,
                    )
                await streaming.backpressure()
                # A model or agent that yields without ever waiting (a fast stream, a local
                # model) would otherwise hold the loop for the whole answer: the heartbeat,
                # the flusher and daphne's other requests get a turn after every event.
                await asyncio.sleep(0)


async def _heartbeat(run: Run, watch: _Watch, target: asyncio.Task[None]) -> None:
    # Threads of their own: on the loop's default pool, slow sync tools could hold every
    # thread and a live run would look dead.
    beat = in_worker_thread(run_heartbeat, executor=_HEARTBEATS)
    while True:
        await asyncio.sleep(float(agentdash_setting("RUN_HEARTBEAT_S")))
        try:
            found = await until_reachable(
                lambda: beat(run=run), what=f"heartbeat of run {run.pk}", max_pause=1.0
            )  # quick to beat again once the database is back: before any reaper looks
        except Exception:
            logger.exception("heartbeat of run %s failed; trying again", run.pk)
            continue
        if watch.done:
            continue  # its work is over: it beats, never stops it, until its outcome is stored
        if not found.alive:
            watch.stop = "lost"
        elif found.cancel_requested:
            watch.stop, watch.reason = "cancel", found.cancel_reason
        else:
            continue
        target.cancel()
        return


async def _record(
    run: Run, trace_id: str, watch: _Watch, error: BaseException | None, looked: Looked
) -> None:
    if watch.stop == "lost":
        logger.warning("run %s was taken from this worker (reaped): not recording", run.pk)
        # Its end would have told the totals of its last spans: told without it.
        await _stored(run_usage_told, f"telling the totals of run {run.pk}")(run=run)
        return
    conclude = _stored(_concluded, f"recording the outcome of run {run.pk}")
    if watch.stop == "cancel":
        message = run_cancel_message(watch.reason)
        await conclude(
            run=run,
            status=Run.Status.CANCELLED,
            error=message,
            trace_id=trace_id,
            report=("CANCELLED", message),
        )
        return
    if error is None:
        ended = _stored(_ended, f"recording the end of run {run.pk}")
        looked.update(await ended(run=run, trace_id=trace_id))
        return
    code, text = failure_of(error)
    trace_id = trace_id or _trace_in_notes(error)
    logger.warning("run %s failed: %s", run.pk, text, exc_info=error)
    await conclude(
        run=run,
        status=Run.Status.FAILED,
        error=text,
        trace_id=trace_id,
        report=(code, f"The run failed: {text}"),
    )


def _ended(*, run: Run, trace_id: str) -> Looked:
    """Record the end of a run that raised nothing, read and written in one thread hop: it
    waits for a person's answer when it ended on tool confirmations, is cancelled when it
    ended at a breakpoint as asked, and has succeeded otherwise. Then, in the same hop, what
    the ``after_run`` hooks look at (``after_run_looks``)."""
    waits = invocation_waits(run=run)
    if waits:
        if not run_wait(run=run, requests=waits, trace_id=trace_id):
            run_usage_told(run=run)  # lost meanwhile: as ``_concluded``
    elif answer_cancels(run.message):
        _concluded(
            run=run,
            status=Run.Status.CANCELLED,
            error="Cancelled at a breakpoint.",
            trace_id=trace_id,
        )
    else:
        _concluded(run=run, status=Run.Status.SUCCEEDED, trace_id=trace_id)
    return after_run_looks(run.pk)


def failure_of(error: BaseException) -> tuple[str, str]:
    """An error code for the chat and the run's error text (type and message)."""
    text = f"{type(error).__name__}: {error}"
    if isinstance(error, CallbackError):
        return "CALLBACK_ERROR", text
    if isinstance(error, ModelCallError):
        return "MODEL_ERROR", text
    return "RUN_FAILED", text


def _trace_in_notes(error: BaseException) -> str:
    for note in getattr(error, "__notes__", ()):
        found = _TRACE_NOTE.search(note)
        if found and found.group(1) != NO_TRACE:
            return found.group(1)
    return ""
