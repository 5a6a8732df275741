"""Tool confirmations in the dashboard (ADK's human in the loop): which requests a session's
runs are waiting on, and a person's answer to one — authorized, checked against the request
the runtime itself stored, accepted once, audited, and run as the session's next run.

A run whose invocation ends on an unanswered request is ``waiting``: no worker holds it and
nothing beats for it; the answer's run picks the invocation up in any worker, at any later
time (the request and the answer are stored events).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from google.genai import types

from agentdash.agent_sessions.locks import session_lock
from agentdash.agent_sessions.models import AgentSession
from agentdash.core.hygiene import value_problem
from agentdash.core.permissions import owner_or_operator_required
from agentdash.core.problems import ConflictError
from agentdash.core.services import audit_record
from agentdash.runs.confirmation_requests import (
    ConfirmationRequest,
    pending_confirmations,
    queued_answers,
    requests_and_answers,
)
from agentdash.runs.lifecycle import run_change_record
from agentdash.runs.models import Run, Wait
from agentdash.runs.services import run_enqueue
from agentdash.runs.waits import wait_answered
from runtime.debug.breakpoints import BREAKPOINT_KEY
from runtime.tools.tool_confirmation import REQUEST_CONFIRMATION_FUNCTION

CONFIRMATION_TARGET = "runs.confirmation"
"""Audit ``target_type`` of an answer; the target id is ``<session id>:<request id>``."""

REASON_MAX = 1000

DECISIONS = frozenset({"approve", "deny", "step", "cancel"})
"""What a person may answer: go on with the tool call (with the payload as it stands, edited
or not), or refuse it (the model is told). A breakpoint's request may also be answered
``step`` (go on, and pause again before the next step) or ``cancel`` (end the invocation
there); ``approve`` resumes it."""


class ConfirmationAnswered(ConflictError):
    """The request has an answer already: a second one changes nothing."""


def confirmation_answer(
    *,
    session: AgentSession,
    request_id: str,
    decision: str,
    payload: Any = None,
    reason: str = "",
    actor: Any,
) -> Run:
    """Answer the session's confirmation request ``request_id`` and queue the run that goes
    on with it (``decision`` approve: the runtime runs the tool again with the answer; deny:
    it tells the model the call was refused). ``payload`` replaces the requested one when
    given.

    Only the session's owner or an operator may answer (``PermissionDenied``). Raises
    ``ValidationError`` for a request the runtime did not store, a payload that cannot be
    stored or a reason too long, and :class:`ConfirmationAnswered` for a request answered
    already. Audited (``confirmation.answer``: the request's tool, arguments, hint and
    payload before; the answer after).
    """
    owner_or_operator_required(session, actor)
    return _answer(session, request_id, decision, payload, reason, actor)


def _answer(
    session: AgentSession, request_id: str, decision: str, payload: Any, reason: str, actor: Any
) -> Run:
    if not isinstance(decision, str) or decision not in DECISIONS:
        raise ValidationError({"decision": [f"must be one of {', '.join(sorted(DECISIONS))}"]})
    confirmed = decision in ("approve", "step")
    if len(reason) > REASON_MAX:
        raise ValidationError({"reason": [f"at most {REASON_MAX} characters"]})
    problem = value_problem({"payload": payload, "reason": reason})
    if problem:
        raise ValidationError({"payload": [f"cannot be stored: {problem}"]})
    with transaction.atomic():
        # The session's row serializes answers to it: two at once cannot both pass.
        session_lock(session_id=session.pk)
        requests, answered = requests_and_answers(session.pk)
        request = next((r for r in requests if r.request_id == request_id), None)
        if request is None:
            raise ValidationError({"request_id": ["no such confirmation request"]})
        if request_id in answered | queued_answers(session.pk):
            raise ConfirmationAnswered(f"confirmation request {request_id} is answered already")
        waiting = Run.objects.filter(
            session=session, invocation_id=request.invocation_id, status=Run.Status.WAITING
        )
        if not waiting.exists():  # cancelled, failed, or a copy in a fork: nobody waits
            raise ValidationError({"request_id": ["the run that asked is not waiting"]})
        answer: dict[str, Any] = {"confirmed": confirmed}
        answer["payload"] = _payload(request, decision, payload)
        reply = types.FunctionResponse(
            id=request_id, name=REQUEST_CONFIRMATION_FUNCTION, response=answer
        )
        run = run_enqueue(
            session=session,
            agent_name=session.app_name,
            message=types.Content(role="user", parts=[types.Part(function_response=reply)]),
            requested_by=actor,
        )
        ended = list(waiting)
        outcome = decision if actor is not None else Wait.Outcome.EXPIRED
        wait_answered(run=ended[0], request=request, outcome=outcome, at=run.created_at)
        waiting.update(
            status=Run.Status.CANCELLED if decision == "cancel" else Run.Status.SUCCEEDED
        )
        for paused in ended:  # a page shows the run's end (it no longer holds the turn)
            paused.refresh_from_db()
            run_change_record(run=paused)
        audit_record(
            actor=actor,
            action="confirmation.answer",
            target_type=CONFIRMATION_TARGET,
            target_id=f"{session.pk}:{request_id}",
            before={
                "tool": request.tool,
                "args": request.args,
                "hint": request.hint,
                "payload": request.payload,
            },
            after={**answer, "run": run.pk},
            reason=reason,
        )
    return run


def _payload(request: ConfirmationRequest, decision: str, payload: Any) -> Any:
    """The answer's payload: the person's (edited) one, else the requested one; for a
    breakpoint, still saying which breakpoint it answers, and how to go on."""
    given = request.payload if payload is None else payload
    asked = request.payload if isinstance(request.payload, dict) else {}
    if BREAKPOINT_KEY not in asked:
        if decision in ("step", "cancel"):
            raise ValidationError({"decision": [f"{decision} answers breakpoints only"]})
        return given
    if not isinstance(given, dict):
        raise ValidationError({"payload": ["a breakpoint's payload is a JSON object"]})
    found = {**given, BREAKPOINT_KEY: asked[BREAKPOINT_KEY]}
    found.pop("step", None)
    found.pop("cancel", None)
    if decision in ("step", "cancel"):
        found[decision] = True
    return found


def confirmations_expire(*, timeout_s: float, now: float | None = None) -> list[str]:
    """Deny every request a waiting run has waited on for longer than ``timeout_s`` (the
    reaper calls it when ``CONFIRMATION_TIMEOUT_S`` is set): the model is told the call was
    refused. Audited with no actor. Returns the request ids denied; a request someone
    answered meanwhile is left alone."""
    moment = time.time() if now is None else now
    since = datetime.fromtimestamp(moment - timeout_s, tz=UTC)
    denied: list[str] = []
    # Only sessions with a run that has waited that long: the rest cannot have expired.
    late = Run.objects.filter(status=Run.Status.WAITING, finished_at__lte=since)
    for session in AgentSession.objects.filter(pk__in=late.values("session_id")):
        for request in pending_confirmations(session_id=session.pk):
            if moment - request.asked_at < timeout_s:
                continue
            why = f"no answer within {timeout_s:g} s"
            try:
                _answer(session, request.request_id, "deny", None, why, None)
            except (ConfirmationAnswered, ValidationError):
                continue
            denied.append(request.request_id)
    return denied
