"""A run's start in the worker: the claim, and in the same thread hop what the run's first
steps would each read in a hop of their own — its agent, its root agent's breakpoints, its
session — and the session store as the run then uses it (:class:`RunSessionService`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from agentdash.agent_sessions.selectors import session_snapshot
from agentdash.agent_sessions.session_service import DjangoSessionService
from agentdash.controls.breakpoints import RunBreakpoints
from agentdash.core.threads import in_worker_thread
from agentdash.registry.selectors import agent_get
from agentdash.runs.lifecycle import run_claim, run_trace_set
from agentdash.runs.models import Run
from runtime import BaseAgent
from runtime.events.event import Event
from runtime.sessions.base_session_service import GetSessionConfig
from runtime.sessions.session import Session
from runtime.telemetry.trace_ids import ChosenTrace
from runtime.telemetry.tracing import trace_id_hex

logger = logging.getLogger(__name__)

NO_TRACE = "0" * 32


class RunSessionService(DjangoSessionService):
    """The database session store as one run uses it: the first stored event tells the run
    which trace it runs in, recorded on the run. (Each stored event gets a change seq, which
    announces it to the live pipeline.)"""

    def __init__(self, run: Run, *, read: Session | None = None) -> None:
        self.run = run
        self.trace_id = ""
        self.chosen: ChosenTrace | None = None  # the trace the claim chose, while driven
        self._read = read  # the session as the claim's hop read it: the runner's first read

    async def aget_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        read, self._read = self._read, None  # handed out once: the runner then owns it
        asked = (app_name, user_id, session_id)
        if read is not None and config is None and asked == (read.app_name, read.user_id, read.id):
            return read
        return await super().aget_session(
            app_name=app_name, user_id=user_id, session_id=session_id, config=config
        )

    @property
    def trace(self) -> str:
        """The trace this attempt's spans are in; ``""`` when it made none."""
        if self.trace_id:
            return self.trace_id
        return self.chosen.trace_id if self.chosen is not None and self.chosen.taken else ""

    async def aappend_event(self, session: Session, event: Event) -> Event:
        stored = await super().aappend_event(session, event)
        if not self.trace_id and not event.partial:
            found = trace_id_hex()  # the invocation's span is current while the runner stores
            if found != NO_TRACE:
                self.trace_id = found
                if found != self.run.trace_id:  # not the trace the claim chose (and wrote)
                    await in_worker_thread(run_trace_set)(run=self.run, trace_id=found)
        return stored


@dataclass
class ReadAhead:
    """What a claimed run's first steps would each read in a thread hop of their own, read
    in the claim's hop instead: its agent, its root agent's breakpoints (kept in
    ``breakpoints``) and, for a first attempt, its session (a later attempt's resume stores
    first). What failed to be read is left unread and read again where it is needed, failing
    there as it would have."""

    breakpoints: RunBreakpoints
    agent: BaseAgent | None = None
    session: Session | None = None


def run_claim_ahead(*, run_id: int, worker: str, trace_id: str) -> tuple[Run, ReadAhead] | None:
    """``run_claim``, then the run's :class:`ReadAhead` (``None``: not claimed)."""
    run = run_claim(run_id=run_id, worker=worker, trace_id=trace_id)
    if run is None:
        return None
    ahead = ReadAhead(breakpoints=RunBreakpoints())  # read again only when one may change
    try:  # never raises: the claim is committed, and a retried claim would find it taken
        ahead.agent = agent_get(name=run.agent_name)
        ahead.breakpoints.read_ahead(agent_name=ahead.agent.name, session_id=run.session_id)
        if run.attempt == 1:
            ahead.session = session_snapshot(
                session_id=run.session_id, app_name=ahead.agent.name, user_id=run.session.user_id
            )
    except Exception:
        logger.debug("run %s: reading ahead failed; read when needed", run.pk, exc_info=True)
    return run, ahead
