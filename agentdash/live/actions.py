"""What a session websocket's requests do: who may, which service is called, what is answered
— and the one registry of request types (:data:`SOCKET_ACTIONS`: type, parser, who, handler).

Every request is checked against an :class:`~agentdash.live.access.Access` read fresh from
the database for that request (a revoked role or ownership takes effect at the next
message). Each action calls the service of the app that owns what it changes: a chat message
starts a run (``runs``), a cancel stops one (``runs``), a state edit is an operator's event
(``agent_sessions``), a toggle sets a callback switch (``controls``) and broadcasts it, an
answer to a tool confirmation queues the run that goes on (``runs``).
Refusals and failures raise :class:`~agentdash.live.protocol.ProtocolError`; nothing is
changed then. Once a change is committed the answer is an ``ack``, even if telling other
processes about it fails (it is retried: ``controls.announce``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from google.genai import types

from agentdash.agent_sessions.errors import StateConflictError
from agentdash.agent_sessions.services import session_state_update
from agentdash.controls.services import callback_setting_set
from agentdash.controls.switchboard import CallbackSettingChange
from agentdash.core.problems import ConflictError, problem_of
from agentdash.core.threads import in_worker_thread
from agentdash.live.access import CANCEL_RUNS, EDIT_STATE, SWITCH_CALLBACKS, Access
from agentdash.live.protocol import (
    CallbackToggle,
    ChatSend,
    ClientMessage,
    ConfirmationAnswer,
    Fields,
    ProtocolError,
    RunCancel,
    StateEdit,
    ack_message,
    chat_accepted_message,
    parse_callback_toggle,
    parse_chat_send,
    parse_confirmation_answer,
    parse_hello,
    parse_ping,
    parse_run_cancel,
    parse_state_edit,
    read_frame,
    unknown_type,
)
from agentdash.remote.pauses import is_remote_request, pause_answer
from agentdash.runs.confirmations import confirmation_answer
from agentdash.runs.models import Run
from agentdash.runs.services import RunNotCancellable, arun_enqueue, run_cancel_request
from runtime.sessions.base_session_service import SessionNotFoundError


def _forbidden(ref: str, why: str) -> ProtocolError:
    return ProtocolError("forbidden", why, ref=ref)


async def _chat_send(request: ChatSend, access: Access) -> dict[str, Any]:
    if not (access.is_owner or access.operator):
        raise _forbidden("chat.send", "only the session's owner or an operator may chat here")
    assert access.session is not None
    arguments = {
        "session": access.session,
        "agent_name": access.session.app_name,
        "message": types.Content(role="user", parts=[types.Part(text=request.text)]),
        "requested_by": access.user,
        "client_id": request.client_id or "",
    }
    try:  # it also starts this process's executor (daphne has no lifespan)
        run = await arun_enqueue(**arguments)
    except (ValueError, ValidationError) as exc:
        raise ProtocolError("bad_request", _describe(exc), ref="chat.send") from None
    return chat_accepted_message(
        run_id=run.pk, invocation_id=run.invocation_id, client_id=request.client_id
    )


def _run_cancel(request: RunCancel, access: Access) -> dict[str, Any]:
    if not (access.is_owner or access.has_perm(CANCEL_RUNS)):
        raise _forbidden("run.cancel", "only the session's owner or an operator may cancel")
    assert access.session is not None
    run = Run.objects.filter(pk=request.run_id, session_id=access.session.pk).first()
    if run is None:
        raise ProtocolError("not_found", "no such run in this session", ref="run.cancel")
    try:
        run = run_cancel_request(run=run, actor=access.user, reason=request.reason)
    except RunNotCancellable as exc:
        raise ProtocolError("conflict", str(exc), ref="run.cancel", status=exc.run.status) from None
    return ack_message(
        "run.cancel", run_id=run.pk, status=run.status, cancel_requested=run.cancel_requested
    )


async def _callback_toggle(request: CallbackToggle, access: Access) -> dict[str, Any]:
    if not (access.operator and access.has_perm(SWITCH_CALLBACKS)):
        raise _forbidden("callback.toggle", "only operators may switch callbacks")
    assert access.session is not None
    session_id = access.session.pk if request.scope == "session" else None

    def toggle() -> CallbackSettingChange:
        try:
            setting = callback_setting_set(
                agent_name=request.agent,
                callback_name=request.callback,
                enabled=request.enabled,
                session_id=session_id,
                actor=access.user,
                reason=request.reason,
            )
        except ValidationError as exc:
            raise ProtocolError("bad_request", _describe(exc), ref="callback.toggle") from None
        return CallbackSettingChange.for_setting(setting)

    # The service announces the change to every process once it commits (controls'
    # controls.announce): even if that fails, it is stored, so the answer is an ``ack``.
    change = await in_worker_thread(toggle)()
    return ack_message("callback.toggle", setting=change.as_message())


def _state_edit(request: StateEdit, access: Access) -> dict[str, Any]:
    if not access.has_perm(EDIT_STATE):
        raise _forbidden("state.edit", "only operators may edit state")
    assert access.session is not None
    try:
        result = session_state_update(
            session_id=access.session.pk,
            delta=request.delta,
            expected_version=request.expected_version,
            actor=access.user,
            reason=request.reason,
        )
    except StateConflictError as exc:
        conflicts = {
            key: {
                "value": c.current_value,
                "scope": c.scope,
                "changed_at_version": c.changed_at_version,
                "current_version": c.current_version,
            }
            for key, c in exc.conflicts.items()
        }
        raise ProtocolError(
            "conflict",
            str(exc),
            ref="state.edit",
            version=exc.current_version,
            current={key: c["value"] for key, c in conflicts.items()},
            conflicts=conflicts,
        ) from None
    except SessionNotFoundError:
        raise ProtocolError("not_found", "the session is gone", ref="state.edit") from None
    except ValueError as exc:
        raise ProtocolError("bad_request", str(exc), ref="state.edit") from None
    return ack_message(
        "state.edit", event_id=result.event_id, version=result.version, state=result.state
    )


def _confirmation_answer(request: ConfirmationAnswer, access: Access) -> dict[str, Any]:
    # Who may answer is the service's rule (the owner or an operator), checked there.
    ref = "confirmation.answer"
    assert access.session is not None
    # A remote app's pause (remote.pauses) is answered the same way; the app goes on.
    answer = pause_answer if is_remote_request(request.request_id) else confirmation_answer
    try:
        found = answer(
            session=access.session,
            request_id=request.request_id,
            decision=request.decision,
            payload=request.payload if request.has_payload else None,
            reason=request.reason,
            actor=access.user,
        )
    except (PermissionDenied, ConflictError, ValidationError) as exc:
        problem = problem_of(exc)
        assert problem is not None
        raise ProtocolError.of(problem, ref=ref, request_id=request.request_id) from None
    run_id = found.pk if isinstance(found, Run) else None
    return ack_message(ref, request_id=request.request_id, decision=request.decision, run_id=run_id)


def _describe(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(exc.messages)
    return str(exc)


# ── The registry: every request type a session socket takes, in one table ────────────────
Handler = Callable[[Any, Access], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class SocketAction:
    """One request type: how its frame is read, who may ask (as docs/PROTOCOL.md says it;
    the handler checks), and what it does. ``handler`` ``None``: the connection itself
    serves it (``hello`` replays, ``ping`` answers ``pong``)."""

    type: str
    parse: Callable[[Fields], ClientMessage]
    who: str
    handler: Handler | None = None


SOCKET_ACTIONS: dict[str, SocketAction] = {
    action.type: action
    for action in (
        SocketAction("hello", parse_hello, "anyone who may see the session"),
        SocketAction("ping", parse_ping, "anyone who may see the session"),
        SocketAction("chat.send", parse_chat_send, "the owner or an operator", _chat_send),
        SocketAction(
            "run.cancel", parse_run_cancel, "the owner or an operator",
            in_worker_thread(_run_cancel),
        ),
        SocketAction(
            "callback.toggle", parse_callback_toggle, "an operator (change_callbacksetting)",
            _callback_toggle,
        ),
        SocketAction(
            "state.edit", parse_state_edit, "an operator (edit state)",
            in_worker_thread(_state_edit),
        ),
        SocketAction(
            "confirmation.answer", parse_confirmation_answer, "the owner or an operator",
            in_worker_thread(_confirmation_answer),
        ),
    )
}  # fmt: skip
CLIENT_MESSAGE_TYPES = frozenset(SOCKET_ACTIONS)


def parse_client_message(frame: str | bytes | None) -> ClientMessage:
    """One client frame as a typed request. Raises :class:`ProtocolError` (never anything
    else): what :func:`~agentdash.live.protocol.read_frame` refuses, ``unknown_type``, or
    ``bad_request`` for a missing or invalid field — a string with a NUL character or an
    unpaired surrogate is invalid, in keys too (``ref`` is then the request's type)."""
    return parse_fields(read_frame(frame))


def parse_fields(fields: Fields) -> ClientMessage:
    """A read frame as its type's request (:func:`parse_client_message`)."""
    action = SOCKET_ACTIONS.get(fields.kind)
    if action is None:
        raise unknown_type(fields.kind)
    return action.parse(fields)


async def perform(request: ClientMessage, access: Access) -> dict[str, Any]:
    """Carry out one mutating request for ``access`` (who may see the session) and return
    the answer to send. Raises ``ProtocolError``."""
    action = SOCKET_ACTIONS.get(request.type)
    if action is None or action.handler is None:
        raise ProtocolError("unknown_type", f"no action for {request.type}")
    return await action.handler(request, access)
