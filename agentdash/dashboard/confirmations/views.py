"""Tool confirmations over HTTP: the requests a session waits on, and a person's answer.

``GET  sessions/<id>/confirmations/`` → ``{"pending": [{request_id, invocation_id, agent,
tool, args, hint, payload, call_id, asked_at, span}]}`` (``span``: the waiting tool call's
``{trace_id, span_id}``, or null); a session of an agent that runs elsewhere lists its app's
pauses too (``remote``: the process that waits, ``{host, pid, connected}``).
``GET  waiting/`` (operators): every run that waits on a person, across sessions, oldest
request first.
``POST sessions/<id>/confirmations/<request_id>/`` with ``decision`` (``approve`` or
``deny``), optionally ``payload`` (JSON text, replacing the requested payload) and ``reason``
→ 202 ``{"run": <id>}`` (a remote app's pause, ``remote-…``: ``{"run": null, "remote":
"answered"}``, the app goes on when it takes the answer); 400 with the field's problem, 403
for someone who may not answer, 404 for a session they cannot see, 409 for a request
answered already.
"""

from __future__ import annotations

import dataclasses

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from agentdash.agent_sessions.selectors import session_get_for_user
from agentdash.core.conf import agentdash_setting
from agentdash.core.hygiene import json_loads_strict
from agentdash.core.permissions import OperatorRequired, is_operator
from agentdash.core.problems import ConflictError, problem_of
from agentdash.remote.pauses import (
    is_remote_request,
    pause_answer,
    pauses_waiting,
    session_pauses_pending,
)
from agentdash.runs.confirmation_requests import pending_confirmations, waiting_requests
from agentdash.runs.confirmations import confirmation_answer
from agentdash.spans.selectors import running_tool_spans, tool_call_spans

PAYLOAD_MAX_CHARS = 200_000


@login_required
@require_GET
@never_cache
def session_confirmations(request: HttpRequest, session_id: str) -> JsonResponse:
    session = session_get_for_user(user=request.user, session_id=session_id)
    pending = [dataclasses.asdict(r) for r in pending_confirmations(session_id=session.pk)]
    if session.is_external:  # its app's pauses wait in the app's process
        pending += session_pauses_pending(session_id=session.pk)
    spans = tool_call_spans(session_id=session.pk, call_ids={p["call_id"] for p in pending})
    unnamed = {p["tool"] for p in pending if "remote" in p and p["call_id"] not in spans}
    running = running_tool_spans(session_id=session.pk, tools=unnamed)
    found = []
    for request_ in pending:
        span = spans.get(request_["call_id"]) or (
            running.get(request_["tool"]) if "remote" in request_ else None
        )
        where = {"trace_id": span[0], "span_id": span[1]} if span else None
        found.append({**request_, "span": where})
    return JsonResponse({"pending": sorted(found, key=lambda p: p["asked_at"])})


@login_required
@require_GET
@never_cache
def waiting_runs(request: HttpRequest) -> HttpResponse:
    if not is_operator(request.user):
        raise OperatorRequired("only operators see every waiting run")
    return render(
        request,
        "dashboard/waiting.html",
        {
            "waiting": waiting_requests(),
            "remote_waiting": pauses_waiting(),
            "timeout_s": agentdash_setting("CONFIRMATION_TIMEOUT_S"),
            "is_operator": True,
        },
    )


def _problem(field: str, message: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": {"field": field, "message": message}}, status=status)


@login_required
@require_POST
def confirmation_answer_view(
    request: HttpRequest, session_id: str, request_id: str
) -> JsonResponse:
    session = session_get_for_user(user=request.user, session_id=session_id)
    decision = request.POST.get("decision", "")
    text = request.POST.get("payload", "")
    payload = None
    if text.strip():
        if len(text) > PAYLOAD_MAX_CHARS:
            return _problem("payload", f"at most {PAYLOAD_MAX_CHARS} characters")
        try:
            payload = json_loads_strict(text)
        except (ValueError, RecursionError) as exc:
            return _problem("payload", f"is not JSON: {exc}")
    remote = is_remote_request(request_id)  # a remote app's pause: the app goes on
    answer = pause_answer if remote else confirmation_answer
    try:
        found = answer(
            session=session,
            request_id=request_id,
            decision=decision,
            payload=payload,
            reason=request.POST.get("reason", ""),
            actor=request.user,
        )
    except (PermissionDenied, ConflictError, ValidationError) as exc:
        problem = problem_of(exc)  # the socket's confirmation.answer says the same
        assert problem is not None
        field = problem.field or {"forbidden": "session", "conflict": "request_id"}[problem.code]
        return _problem(field, problem.message, status=problem.status)
    if remote:
        return JsonResponse({"run": None, "remote": found.status}, status=202)
    return JsonResponse({"run": found.pk}, status=202)
