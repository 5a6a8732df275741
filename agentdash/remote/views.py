"""The control API remote processes speak (``agentdash.client``), authenticated by the app's
ingest key (``Authorization: Bearer <key>``), JSON in and out:

- ``POST /v1/agentdash/processes`` — ``{"host", "pid", "versions", "root_agent", "agents":
  [{name, callbacks: [{slot, name}], tools: [name]}]}`` → 201 ``{"process": token,
  "poll_s"}``;
- ``POST /v1/agentdash/processes/<token>/controls`` — ``{"sessions": [its session ids],
  "states": {session: state}, "applied": {session: edit id}, "pauses": [{id, session, kind,
  agent, tool, call_id, args, hint, payload}], "taken": [{id, session}], "ended": [{id,
  session, why}]}`` (all optional) → ``{"switches": [{agent, callback, session, enabled}],
  "edits": [{id, session, delta}], "waiting": [session], "breakpoints": [{agent, session,
  kind, tool, outcome}], "answers": [{id, session, decision, payload, reason}]}``: what the
  process must obey now, the operators' state edits it has yet to apply, where it must
  pause and the answers to the pauses it waits in (``pauses``); the states it reports are
  mirrored into its sessions (``services.remote_states_record``), but for those AgentDash
  has no session of yet (``waiting``: report them again). 404 for a token the key did not
  register (the client registers again, and names its pauses again).

Errors are ``{"error": {"code", "message"}}``: 400 bad input, 401 no or bad key, 405, 413,
429 (``Retry-After``), 503 database unreachable (``Retry-After``)."""

from __future__ import annotations

import json
import math
from typing import Any

from django.core.exceptions import ValidationError
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt

from agentdash.core.middleware import RETRY_AFTER_SECONDS, takes_no_form
from agentdash.core.outages import caused_by_outage
from agentdash.ingest.otlp_decode import IngestRefused
from agentdash.ingest.receive import key_required, rate_wait
from agentdash.remote.pauses import pauses_ended, pauses_record, pauses_taken
from agentdash.remote.selectors import (
    remote_breakpoints,
    remote_process_find,
    remote_switches,
)
from agentdash.remote.services import (
    MAX_SESSIONS,
    remote_edits,
    remote_edits_applied,
    remote_process_register,
    remote_process_seen,
    remote_states_record,
)

POLL_S = 1.0
MAX_BODY = 1024 * 1024


def _error(status: int, code: str, message: str) -> JsonResponse:
    return JsonResponse({"error": {"code": code, "message": message}}, status=status)


def _guarded(handler: Any, method: str) -> Any:
    @takes_no_form
    @csrf_exempt
    @never_cache
    def view(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
        if request.method != method:
            response = _error(405, "method", f"use {method}")
            response["Allow"] = method
            return response
        try:
            header = request.headers.get("Authorization", "")
            scheme, _, raw = header.strip().partition(" ")
            key = key_required(raw.strip() if scheme.lower() == "bearer" else "")
            wait = rate_wait(key)
            if wait is not None:
                response = _error(429, "rate_limited", "too many requests for this key")
                response["Retry-After"] = str(max(1, math.ceil(wait)))
                return response
            return handler(request, key, *args, **kwargs)
        except IngestRefused as error:
            return _error(error.status, "unauthorized", error.message)
        except ValidationError as error:
            return _error(400, "bad_request", "; ".join(error.messages))
        except Exception as exc:
            if not caused_by_outage(exc):
                raise
            response = _error(503, "unavailable", "the database is unreachable: try again")
            response["Retry-After"] = str(RETRY_AFTER_SECONDS)
            return response

    return view


def _register(request: HttpRequest, key: Any) -> JsonResponse:
    found = _json_body(request)
    if isinstance(found, JsonResponse):
        return found
    process = remote_process_register(
        key=key,
        host=str(found.get("host") or ""),
        pid=found.get("pid"),
        versions=found.get("versions") or {},
        agents=found.get("agents") or [],
        root_agent=str(found.get("root_agent") or ""),
    )
    return JsonResponse({"process": process.token, "poll_s": POLL_S}, status=201)


def _json_body(request: HttpRequest) -> dict[str, Any] | JsonResponse:
    if len(request.body) > MAX_BODY:
        return _error(413, "too_large", f"the body is larger than {MAX_BODY} bytes")
    if not request.body:
        return {}
    try:
        found = json.loads(request.body)
    except (ValueError, RecursionError):
        return _error(400, "bad_json", "the body is not JSON")
    if not isinstance(found, dict):
        return _error(400, "bad_request", "the body must be a JSON object")
    return found


def _controls(request: HttpRequest, key: Any, token: str) -> JsonResponse:
    process = remote_process_find(key=key, token=token)
    if process is None:
        return _error(404, "not_found", "no such process for this key: register again")
    found = _json_body(request)
    if isinstance(found, JsonResponse):
        return found
    sessions = found.get("sessions") or []
    if not isinstance(sessions, list) or not all(isinstance(s, str) for s in sessions):
        return _error(400, "bad_request", "sessions must be a list of session ids")
    sessions = [s[:200] for s in sessions if s.strip()][:MAX_SESSIONS]
    remote_process_seen(process=process)
    remote_edits_applied(process=process, applied=found.get("applied") or {})
    waiting = remote_states_record(process=process, states=found.get("states") or {})
    pauses_taken(process=process, taken=found.get("taken") or [])
    pauses_ended(process=process, ended=found.get("ended") or [])
    answers = pauses_record(process=process, pauses=found.get("pauses") or [])
    return JsonResponse(
        {
            "switches": remote_switches(process=process, sessions=sessions),
            "edits": remote_edits(process=process, sessions=sessions),
            "waiting": waiting,
            "breakpoints": remote_breakpoints(process=process, sessions=sessions),
            "answers": answers,
        }
    )


processes = _guarded(_register, "POST")
controls = _guarded(_controls, "POST")
