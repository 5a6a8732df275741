"""Which tool confirmations a session's runs wait on: every ``adk_request_confirmation`` call
the runtime stored (in an agent's event, never a client's) that no answer has met yet — a
stored answer, or one a queued run carries. The answer itself: ``runs.confirmations``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db.models import Min
from google.genai import types

from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.agent_sessions.selectors import event_from_row
from agentdash.core.prepared import PreparedQuery
from agentdash.runs.models import Run
from agentdash.runs.selectors import ACTIVE
from runtime.events.event import Event
from runtime.tools.tool_confirmation import REQUEST_CONFIRMATION_FUNCTION

WAITING_LIST_MAX = 200


@dataclass(frozen=True)
class ConfirmationRequest:
    """One ``adk_request_confirmation`` call the runtime stored and nobody has answered."""

    request_id: str
    invocation_id: str
    agent: str
    tool: str
    args: dict[str, Any]
    hint: str
    payload: Any
    call_id: str = ""
    """The id of the tool call that waits (its ``execute_tool`` span has it)."""
    asked_at: float = 0.0
    """Unix time the request was stored."""


_EVENTS: PreparedQuery[SessionEvent] = PreparedQuery(
    lambda session_id: SessionEvent.objects.filter(session_id=session_id, seq__gt=0).order_by("seq")
)
_INVOCATION_EVENTS: PreparedQuery[SessionEvent] = PreparedQuery(
    lambda session_id, invocation_id: SessionEvent.objects.filter(
        session_id=session_id, seq__gt=0, invocation_id=invocation_id
    ).order_by("seq")
)
_USER_EVENTS_AFTER: PreparedQuery[SessionEvent] = PreparedQuery(
    lambda session_id, seq: SessionEvent.objects.filter(
        session_id=session_id, seq__gt=seq, author="user"
    ).order_by("seq")
)


def requests_and_answers(
    session_id: str, *, invocation_id: str | None = None
) -> tuple[list[ConfirmationRequest], set[str]]:
    """The requests stored in the session (one invocation's, when given), and the ids that
    the answers stored after the first of them answer."""
    requests: list[ConfirmationRequest] = []
    first_seq: int | None = None
    rows = (
        _EVENTS.rows(session_id)
        if invocation_id is None
        else _INVOCATION_EVENTS.rows(session_id, invocation_id)
    )
    for row in rows:
        if row.author == "user" or not _asks(row.data):  # a client's event never asks
            continue
        event = event_from_row(row)  # validated only when it asks: events can be large
        for call in event.get_function_calls():
            if call.name != REQUEST_CONFIRMATION_FUNCTION or not call.id:
                continue
            first_seq = row.seq if first_seq is None else first_seq
            requests.append(_request(event, call))
    if first_seq is None:
        return [], set()
    answered: set[str] = set()
    for row in _USER_EVENTS_AFTER.rows(session_id, first_seq):
        answered |= {
            fr.id
            for fr in event_from_row(row).get_function_responses()
            if fr.name == REQUEST_CONFIRMATION_FUNCTION and fr.id
        }
    return requests, answered


def _asks(data: Any) -> bool:
    """Whether a stored event's data holds a confirmation request (read as stored, before
    building the event)."""
    content = data.get("content") if isinstance(data, dict) else None
    parts = content.get("parts") if isinstance(content, dict) else None
    return any(
        isinstance(part, dict)
        and isinstance(part.get("function_call"), dict)
        and part["function_call"].get("name") == REQUEST_CONFIRMATION_FUNCTION
        for part in parts or []
    )


def _request(event: Event, call: types.FunctionCall) -> ConfirmationRequest:
    args = call.args or {}
    original = args.get("originalFunctionCall") or {}
    asked = args.get("toolConfirmation") or {}
    return ConfirmationRequest(
        request_id=str(call.id),
        invocation_id=event.invocation_id,
        agent=event.author,
        tool=str(original.get("name", "")),
        args=dict(original.get("args") or {}),
        hint=str(asked.get("hint", "")),
        payload=asked.get("payload"),
        call_id=str(original.get("id") or ""),
        asked_at=float(event.timestamp),
    )


def queued_answers(session_id: str) -> set[str]:
    """Request ids answered by a run that has not stored its message yet."""
    found: set[str] = set()
    for message in Run.objects.filter(session_id=session_id, status__in=ACTIVE).values_list(
        "message", flat=True
    ):
        for part in (message or {}).get("parts") or []:
            response = part.get("function_response") or {}
            if response.get("name") == REQUEST_CONFIRMATION_FUNCTION and response.get("id"):
                found.add(response["id"])
    return found


def pending_confirmations(*, session_id: str) -> list[ConfirmationRequest]:
    """The session's unanswered confirmation requests, oldest first: those of its waiting
    runs (only their invocations' events are read; a request in a run that ended otherwise —
    cancelled, failed, or copied into a fork — waits on nobody)."""
    found: list[ConfirmationRequest] = []
    queued: set[str] | None = None
    waiting = Run.objects.filter(session_id=session_id, status=Run.Status.WAITING)
    for invocation_id in waiting.values_list("invocation_id", flat=True):
        requests, answered = requests_and_answers(session_id, invocation_id=invocation_id)
        if requests and queued is None:
            queued = queued_answers(session_id)
        found += [r for r in requests if r.request_id not in answered | (queued or set())]
    return sorted(found, key=lambda r: r.asked_at)


@dataclass(frozen=True)
class WaitingRequest:
    """A request with the session it waits in (the operators' list of waiting runs)."""

    session_id: str
    session_title: str
    app_name: str
    owner: str
    request: ConfirmationRequest

    @property
    def asked_at(self) -> datetime:
        return datetime.fromtimestamp(self.request.asked_at, tz=UTC)


def waiting_requests(*, limit: int = WAITING_LIST_MAX) -> list[WaitingRequest]:
    """Every unanswered request of the sessions that have a waiting run, oldest first (at
    most ``limit`` sessions, the longest waiting first)."""
    sessions = (
        AgentSession.objects.filter(runs__status=Run.Status.WAITING)
        .select_related("owner")
        .annotate(since=Min("runs__finished_at"))
        .order_by("since")
        .distinct()[:limit]
    )
    found = [
        WaitingRequest(
            session_id=s.pk,
            session_title=s.title or s.first_message or s.pk,
            app_name=s.app_name,
            owner=s.owner.get_username() if s.owner else "",
            request=request,
        )
        for s in sessions
        for request in pending_confirmations(session_id=s.pk)
    ]
    return sorted(found, key=lambda w: w.request.asked_at)


def invocation_waits(*, run: Run) -> list[ConfirmationRequest]:
    """The confirmation requests ``run``'s invocation ended on that nobody has answered (a
    run waits when there are any). Read when every run ends: only that invocation's events,
    and answers only when it asked."""
    requests, answered = requests_and_answers(run.session_id, invocation_id=run.invocation_id)
    if requests:  # an answer may be queued already, before this run has ended
        answered |= queued_answers(run.session_id)
    return [r for r in requests if r.request_id not in answered]


def answer_cancels(message: Any) -> bool:
    """Whether a run's message answers a breakpoint with ``cancel`` (the person ended the
    invocation there): the run then ends ``cancelled``, not ``succeeded``."""
    parts = message.get("parts") if isinstance(message, dict) else None
    for part in parts or []:
        reply = part.get("function_response") if isinstance(part, dict) else None
        if not isinstance(reply, dict) or reply.get("name") != REQUEST_CONFIRMATION_FUNCTION:
            continue
        response = reply.get("response")
        payload = response.get("payload") if isinstance(response, dict) else None
        if isinstance(payload, dict) and payload.get("cancel") is True:
            return True
    return False
