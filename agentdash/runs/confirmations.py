"""Tool confirmations in the dashboard (ADK's human in the loop): which requests a session's
runs are waiting on, and a person's answer to one — authorized, checked against the request
the runtime itself stored, accepted once, audited, and run as the session's next run.

A run whose invocation ends on an unanswered request is ``waiting``: no worker holds it and
nothing beats for it; the answer's run picks the invocation up in any worker, at any later
time (the request and the answer are stored events).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from google.genai import types

from agentdash.agent_sessions.models import AgentSession
from agentdash.core.hygiene import value_problem
from agentdash.core.permissions import is_operator
from agentdash.core.services import audit_record
from agentdash.runs.confirmation_requests import queued_answers, requests_and_answers
from agentdash.runs.models import Run
from agentdash.runs.services import run_enqueue
from runtime.tools.tool_confirmation import REQUEST_CONFIRMATION_FUNCTION

CONFIRMATION_TARGET = "runs.confirmation"
"""Audit ``target_type`` of an answer; the target id is ``<session id>:<request id>``."""

REASON_MAX = 1000


class ConfirmationAnswered(Exception):
    """The request has an answer already: a second one changes nothing."""


def confirmation_answer(
    *,
    session: AgentSession,
    request_id: str,
    confirmed: bool,
    payload: Any = None,
    reason: str = "",
    actor: Any,
) -> Run:
    """Answer the session's confirmation request ``request_id`` and queue the run that goes
    on with it (the runtime runs the tool again with the answer, or tells the model it was
    refused). ``payload`` replaces the requested one when given.

    Only the session's owner or an operator may answer (``PermissionDenied``). Raises
    ``ValidationError`` for a request the runtime did not store, a payload that cannot be
    stored or a reason too long, and :class:`ConfirmationAnswered` for a request answered
    already. Audited (``confirmation.answer``: the request's tool, arguments, hint and
    payload before; the answer after).
    """
    owner = getattr(session, "owner_id", None)
    if not (is_operator(actor) or (owner is not None and owner == getattr(actor, "pk", None))):
        raise PermissionDenied("only the session's owner or an operator may answer")
    if not isinstance(confirmed, bool):
        raise ValidationError({"confirmed": ["must be true or false"]})
    if len(reason) > REASON_MAX:
        raise ValidationError({"reason": [f"at most {REASON_MAX} characters"]})
    problem = value_problem({"payload": payload, "reason": reason})
    if problem:
        raise ValidationError({"payload": [f"cannot be stored: {problem}"]})
    with transaction.atomic():
        # The session's row serializes answers to it: two at once cannot both pass.
        AgentSession.objects.select_for_update().filter(pk=session.pk).first()
        requests, answered = requests_and_answers(session.pk)
        request = next((r for r in requests if r.request_id == request_id), None)
        if request is None:
            raise ValidationError({"request_id": ["no such confirmation request"]})
        if request_id in answered | queued_answers(session.pk):
            raise ConfirmationAnswered(f"confirmation request {request_id} is answered already")
        answer: dict[str, Any] = {"confirmed": confirmed}
        answer["payload"] = request.payload if payload is None else payload
        reply = types.FunctionResponse(
            id=request_id, name=REQUEST_CONFIRMATION_FUNCTION, response=answer
        )
        run = run_enqueue(
            session=session,
            agent_name=session.app_name,
            message=types.Content(role="user", parts=[types.Part(function_response=reply)]),
            requested_by=actor,
        )
        Run.objects.filter(
            session=session, invocation_id=request.invocation_id, status=Run.Status.WAITING
        ).update(status=Run.Status.SUCCEEDED)
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
