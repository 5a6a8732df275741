"""What a session websocket's requests do: who may, which service is called, what is answered.

Every request is checked against an :class:`~agentdash.live.access.Access` read fresh from
the database for that request (a revoked role or ownership takes effect at the next
message). Each action calls the service of the app that owns what it changes: a chat message
starts a run (``runs``), a cancel stops one (``runs``), a state edit is an operator's event
(``agent_sessions``), a toggle sets a callback switch (``controls``) and broadcasts it, an
answer to a tool confirmation queues the run that goes on (``runs``).
Refusals and failures raise :class:`~agentdash.live.protocol.ProtocolError`; nothing is
changed then. Once a change is committed the answer is an ``ack``, even if telling other
processes about it fails (it is retried: ``controls.switch_announce``).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from google.genai import types

from agentdash.agent_sessions.errors import StateConflictError
from agentdash.agent_sessions.services import session_state_update
from agentdash.controls.services import callback_setting_set
from agentdash.controls.switchboard import CallbackSettingChange
from agentdash.core.threads import in_worker_thread
from agentdash.live.access import CANCEL_RUNS, EDIT_STATE, SWITCH_CALLBACKS, Access
from agentdash.live.protocol import (
    CallbackToggle,
    ChatSend,
    ClientMessage,
    ConfirmationAnswer,
    ProtocolError,
    RunCancel,
    StateEdit,
    ack_message,
    chat_accepted_message,
)
from agentdash.runs.confirmations import ConfirmationAnswered, confirmation_answer
from agentdash.runs.models import Run
from agentdash.runs.services import RunNotCancellable, arun_enqueue, run_cancel_request
from runtime.sessions.base_session_service import SessionNotFoundError


async def perform(request: ClientMessage, access: Access) -> dict[str, Any]:
    """Carry out one mutating request for ``access`` (who may see the session) and return
    the answer to send. Raises ``ProtocolError``."""
    if isinstance(request, ChatSend):
        return await _chat_send(request, access)
    if isinstance(request, RunCancel):
        return await in_worker_thread(_run_cancel)(request, access)
    if isinstance(request, CallbackToggle):
        return await _callback_toggle(request, access)
    if isinstance(request, StateEdit):
        return await in_worker_thread(_state_edit)(request, access)
    if isinstance(request, ConfirmationAnswer):
        return await in_worker_thread(_confirmation_answer)(request, access)
    raise ProtocolError("unknown_type", f"no action for {type(request).__name__}")


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
    # switch_announce): even if that fails, it is stored, so the answer is an ``ack``.
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
    try:
        run = confirmation_answer(
            session=access.session,
            request_id=request.request_id,
            decision=request.decision,
            payload=request.payload if request.has_payload else None,
            reason=request.reason,
            actor=access.user,
        )
    except PermissionDenied as exc:
        raise _forbidden(ref, str(exc)) from None
    except ConfirmationAnswered as exc:
        raise ProtocolError("conflict", str(exc), ref=ref, request_id=request.request_id) from None
    except ValidationError as exc:
        raise ProtocolError(
            "bad_request", _describe(exc), ref=ref, request_id=request.request_id
        ) from None
    return ack_message(ref, request_id=request.request_id, decision=request.decision, run_id=run.pk)


def _describe(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(exc.messages)
    return str(exc)
