"""Fork a session from one of its events, and replay a fork (docs/PROTOCOL.md, "Forks and
replays").

``GET  sessions/<id>/fork/?event_id=…`` → what the fork form starts from: the event's
position, the session's own state as of it (for those who may edit state) and the switches
that would be carried over (for operators).
``POST sessions/<id>/fork/`` with ``event_id``, optionally ``state`` (a JSON object) and
``switches`` (a JSON list of ``{"agent", "name", "enabled"}``) → the fork's page (302), or,
asked for JSON, 201 ``{"session", "url", "replay_url"}``.
``POST sessions/<id>/replay/`` → 202 ``{"replay", "status", "messages", "runs"}``.

A bad field is a 400 ``{"error": {"code", "field", "message"}}`` (a plain-text 400 for a
form posted without scripts); 403 for what the user may not do; 404 for a session they
cannot see. Nothing is stored on any of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from agentdash.agent_sessions.forks import session_state_at
from agentdash.agent_sessions.selectors import session_event_place, session_get_for_user
from agentdash.core.hygiene import JsonTooDeep, json_loads_bounded
from agentdash.core.permissions import can_edit_state, is_operator
from agentdash.dashboard.session.selectors import session_callback_switches
from agentdash.runs.forks import fork_create
from agentdash.runs.replays import replay_start

if TYPE_CHECKING:
    from agentdash.agent_sessions.models import AgentSession

JSON_MAX_CHARS = 200_000
EVENT_ID_MAX_CHARS = 128


class _Bad(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def _wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


def _problem(request: HttpRequest, field: str, message: str, status: int = 400) -> HttpResponse:
    if status == 400 and not _wants_json(request):
        return HttpResponseBadRequest(f"{field}: {message}", content_type="text/plain")
    code = {400: "bad_request", 403: "forbidden"}.get(status, "error")
    return JsonResponse(
        {"error": {"code": code, "field": field, "message": message}}, status=status
    )


def _first_error(exc: ValidationError) -> tuple[str, str]:
    """The first field a ``ValidationError`` names (``"session"`` when it names none) and
    what it says."""
    if hasattr(exc, "error_dict"):
        field, messages = next(iter(exc.message_dict.items()))
        return field, " ".join(messages)
    return "session", " ".join(exc.messages)


def _json_field(request: HttpRequest, name: str) -> Any:
    """The JSON in POST field ``name``, ``None`` when it is absent or blank."""
    text = request.POST.get(name, "")
    if not text.strip():
        return None
    if len(text) > JSON_MAX_CHARS:
        raise _Bad(name, f"at most {JSON_MAX_CHARS:,} characters")
    try:
        return json_loads_bounded(text)
    except JsonTooDeep as exc:
        raise _Bad(name, f"is {exc}") from None
    except ValueError as exc:  # bad JSON, or an integer past Python's digit limit
        raise _Bad(name, f"is not JSON: {exc}") from None


def _event_id(request: HttpRequest, source: Any) -> str:
    event_id = str(source.get("event_id", "")).strip()
    if not event_id:
        raise _Bad("event_id", "say which event to fork at")
    if len(event_id) > EVENT_ID_MAX_CHARS:
        raise _Bad("event_id", "this session has no event with that id")
    return event_id


def _fork_form(request: HttpRequest, session: AgentSession) -> HttpResponse:
    try:
        event_id = _event_id(request, request.GET)
    except _Bad as exc:
        return _problem(request, exc.field, str(exc))
    found = session_event_place(session_id=session.pk, event_id=event_id)
    if found is None:
        return _problem(request, "event_id", "this session has no event with that id")
    data: dict[str, Any] = {"event_id": event_id, "seq": found["seq"], "author": found["author"]}
    if can_edit_state(request.user):
        data["state"] = session_state_at(session=session, seq=found["seq"])
    if is_operator(request.user):
        data["switches"] = [
            {"agent": c["agent"], "name": c["name"], "enabled": c["enabled"]}
            for c in session_callback_switches(session=session)
        ]
    return JsonResponse(data)


@login_required
@require_http_methods(["GET", "POST"])
@never_cache
def session_fork_view(request: HttpRequest, session_id: str) -> HttpResponse:
    session = session_get_for_user(user=request.user, session_id=session_id)
    if request.method == "GET":
        return _fork_form(request, session)
    try:
        event_id = _event_id(request, request.POST)
        state = _json_field(request, "state")
        switches = _json_field(request, "switches")
    except _Bad as exc:
        return _problem(request, exc.field, str(exc))
    try:
        fork = fork_create(
            parent=session,
            event_id=event_id,
            actor=request.user,
            state=state,
            switches=switches,
        )
    except PermissionDenied as exc:
        return _problem(request, "session", str(exc), status=403)
    except ValidationError as exc:
        return _problem(request, *_first_error(exc))
    url = reverse("dashboard:session", kwargs={"session_id": fork.pk})
    if _wants_json(request):
        replay = reverse("dashboard:session_replay", kwargs={"session_id": fork.pk})
        return JsonResponse({"session": fork.pk, "url": url, "replay_url": replay}, status=201)
    return redirect(url)


@login_required
@require_POST
def session_replay_view(request: HttpRequest, session_id: str) -> HttpResponse:
    session = session_get_for_user(user=request.user, session_id=session_id)
    try:
        replay = replay_start(session=session, actor=request.user)
    except PermissionDenied as exc:
        return _problem(request, "session", str(exc), status=403)
    except ValidationError as exc:
        field, message = _first_error(exc)
        error = {"code": "bad_request", "field": field, "message": message}
        return JsonResponse({"error": error}, status=400)
    return JsonResponse(
        {
            "replay": replay.pk,
            "status": replay.status,
            "messages": len(replay.messages),
            "runs": list(replay.run_ids),
        },
        status=202,
    )
