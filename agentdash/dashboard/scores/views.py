"""Scores over HTTP, for the session page (signed in; CSRF as every POST) and for scripts
(``Authorization: Bearer <API token>``: as the token's person, source ``api``; no CSRF).

``GET  sessions/<id>/scores/`` → ``{"definitions": [...], "scores": [...]}``.
``POST sessions/<id>/scores/`` with a JSON body ``{"name", "value", "target"?: "session" |
"run" | "span", "run"?, "trace_id"?, "span_id"?, "comment"?, "source"?: "person" |
"end_user" | "api"}`` — a run may be named by its ``invocation_id`` instead (the chat's
thumbs; ``end_user`` is the session's owner: anyone else's thumbs are a person's) → 201
``{"score": {...}}``; a score given again by the same person replaces theirs (200). 400
``{"error": {"field", "message"}}`` for an unknown score, a value its definition cannot take,
a run or span not of the session, a body that is no JSON object; 403 for someone who may not
score it — and for a session they cannot see, or that does not exist (the same answer: an id
is not confirmed). Nothing is stored when it refuses.
``POST sessions/<id>/scores/<score id>/delete/`` → 200: the author or an operator takes it back.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from agentdash.agent_sessions.ids import session_id_problem
from agentdash.agent_sessions.selectors import session_get_for_user
from agentdash.core.api_tokens import token_or_session
from agentdash.core.hygiene import json_loads_strict
from agentdash.core.problems import problem_of
from agentdash.runs.selectors import run_id_of_invocation
from agentdash.scores.selectors import (
    definitions_enabled,
    score_ids_of,
    score_of_session,
    score_snapshot,
    session_scores,
)
from agentdash.scores.services import SOURCES, TARGETS, ScoreGiven, score_delete, score_record

BODY_MAX_BYTES = 20_000
SOURCES_GIVEN = (SOURCES.PERSON, SOURCES.END_USER, SOURCES.API)
"""What a signed-in caller may say it is (an evaluator writes in the workers, not here)."""


def _problem(field: str, message: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": {"field": field, "message": message}}, status=status)


@token_or_session
@require_http_methods(["GET", "POST"])
@never_cache
def session_scores_view(request: HttpRequest, session_id: str) -> JsonResponse:
    session = _session(request, session_id)
    if isinstance(session, JsonResponse):
        return session
    if request.method == "GET":
        mine = score_ids_of(session_id=session.pk, user_id=request.user.pk)
        scores = [{**s, "mine": s["id"] in mine} for s in session_scores(session_id=session.pk)]
        return JsonResponse({"definitions": definitions_enabled(), "scores": scores})
    body = _body(request)
    if isinstance(body, JsonResponse):
        return body
    source = body.get("source", SOURCES.PERSON)
    if source not in SOURCES_GIVEN:
        return _problem("source", f"one of {', '.join(SOURCES_GIVEN)}")
    if getattr(request, "api_token", None) is not None:
        source = SOURCES.API  # a script with its person's token
    if source == SOURCES.END_USER and session.owner_id != request.user.pk:
        source = SOURCES.PERSON  # an operator's thumbs in someone's chat: a person's
    target = body.get("target", TARGETS.SESSION)
    run_id = body.get("run")
    invocation = body.get("invocation_id")
    if target == TARGETS.RUN and run_id is None and isinstance(invocation, str):
        # The chat knows an answer's invocation; its run is the one that made it.
        run_id = run_id_of_invocation(session_id=session.pk, invocation_id=invocation)
    given = ScoreGiven(
        name=str(body.get("name", "")), value=body.get("value"),
        target=target if isinstance(target, str) else "",
        run_id=run_id, trace_id=body.get("trace_id") or "",
        span_id=body.get("span_id") or "", comment=body.get("comment") or "",
    )  # fmt: skip
    try:
        score, made = score_record(session=session, given=given, source=source, actor=request.user)
    except (PermissionDenied, ValidationError) as exc:
        problem = problem_of(exc)
        assert problem is not None
        return _problem(problem.field or "session", problem.message, status=problem.status)
    return JsonResponse({"score": score_snapshot(score)}, status=201 if made else 200)


def _session(request: HttpRequest, session_id: str) -> Any:
    """The session, or a 403 — the same for a session that is someone else's and for one
    that does not exist, so that an id is never confirmed. Junk that could be no session's
    id names nothing: a 404, as for any path."""
    try:
        return session_get_for_user(user=request.user, session_id=session_id)
    except Http404:
        if session_id_problem(session_id):
            raise
        return _problem("session", NOT_YOURS, status=403)


NOT_YOURS = "you may not see or score this session (or there is none)"


def _body(request: HttpRequest) -> dict[str, Any] | JsonResponse:
    if request.content_type != "application/json":
        return _problem("body", "a JSON object, sent as Content-Type: application/json")
    if len(request.body) > BODY_MAX_BYTES:
        return _problem("body", f"at most {BODY_MAX_BYTES} bytes", status=413)
    try:
        body = json_loads_strict(request.body or b"{}")
    except (ValueError, RecursionError, UnicodeDecodeError) as exc:
        return _problem("body", f"is not JSON: {str(exc)[:200]}")
    if not isinstance(body, dict):
        return _problem("body", "a JSON object")
    return body


@token_or_session
@require_POST
def score_delete_view(request: HttpRequest, session_id: str, score_id: int) -> JsonResponse:
    session = _session(request, session_id)
    if isinstance(session, JsonResponse):
        return session
    score = score_of_session(session_id=session.pk, score_id=score_id)
    if score is None:
        raise Http404("no such score in this session")
    try:
        score_delete(score=score, actor=request.user)
    except PermissionDenied as exc:
        return _problem("score", str(exc), status=403)
    return JsonResponse({"deleted": score_id})
