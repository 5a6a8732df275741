"""Reads of eval sets and runs, and of a session as an eval case sees it."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from agentdash.agent_sessions.models import AgentSession
from agentdash.agent_sessions.selectors import event_from_row, session_events
from agentdash.evals.models import EvalCaseResult, EvalRun, EvalSetRecord
from runtime.evaluation import EvalSet, Invocation, eval_set_load, events_to_invocations
from runtime.events.event import Event


def eval_sets_list() -> QuerySet[EvalSetRecord]:
    """Every eval set, the last changed first, with its latest run's status."""
    return EvalSetRecord.objects.select_related("created_by")


def eval_set_of(*, record: EvalSetRecord) -> EvalSet:
    """The stored set as ``runtime.evaluation`` models (it was valid when stored)."""
    return eval_set_load(record.data)


def eval_runs_of(*, record: EvalSetRecord, limit: int = 20) -> list[EvalRun]:
    return list(record.runs.select_related("started_by")[:limit])


def eval_run_cases(*, eval_run: EvalRun) -> QuerySet[EvalCaseResult]:
    return eval_run.cases.select_related("session").order_by("position")


def session_event_list(*, session_id: str) -> list[Event]:
    """The session's stored events, in order, as the runtime's ``Event``s."""
    return [event_from_row(row) for row in session_events(session_id=session_id)]


def session_invocations(*, session_id: str) -> list[Invocation]:
    """The session's conversation as eval invocations (one per user message)."""
    return events_to_invocations(session_event_list(session_id=session_id))


def session_initial_state(*, session: AgentSession, events: list[Event]) -> dict[str, Any]:
    """The session's own state before its first event, as far as it is known: its keys
    that no event ever changed (a key an event set is left out: its first value is gone).
    ``app:`` and ``user:`` keys are shared, not the session's, and never included."""
    touched: set[str] = set()
    for event in events:
        touched.update(event.actions.state_delta)
    return {k: v for k, v in (session.state or {}).items() if k not in touched}


def eval_set_find(*, pk: int) -> EvalSetRecord | None:
    """The eval set of that id, or ``None``."""
    return EvalSetRecord.objects.filter(pk=pk).first()


def eval_run_find(*, pk: int) -> EvalRun | None:
    """The eval run of that id with its set and who started it, or ``None``."""
    return EvalRun.objects.select_related("eval_set", "started_by").filter(pk=pk).first()
