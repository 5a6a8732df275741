"""Remote apps' pauses: a step of an agent that runs elsewhere waits for a person — at a
breakpoint set in the dashboard, or at an ADK tool confirmation. The app's process says it
waits (with every poll, until it has its answer: ``pauses_record``), a person answers on the
session page as for a local run (``pause_answer``: authorized, checked, once, audited), the
process takes the answer with its next poll and says so (``pauses_taken``) — or ends the
pause by its own rule, a timeout and a default answer (``pauses_ended``).

Every change of a pause is a change of its session (kind ``pause``): open pages read the
pending pauses again at once.
"""

from __future__ import annotations

import secrets
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from agentdash.agent_sessions.external import sessions_existing
from agentdash.agent_sessions.models import AgentSession
from agentdash.changes.items import Item, RowKey, items_of_rows
from agentdash.changes.models import SessionChange
from agentdash.changes.services import session_change_next
from agentdash.core.hygiene import storable, text_storable, value_problem
from agentdash.core.permissions import owner_or_operator_required
from agentdash.core.problems import ConflictError
from agentdash.core.services import audit_record
from agentdash.ingest.services import session_id_for
from agentdash.remote.models import RemotePause, RemoteProcess
from agentdash.remote.selectors import is_connected

REQUEST_PREFIX = "remote-"
"""How the page's id of a remote pause begins (a local request's id never does)."""
PAUSE_TARGET = "remote.pause"
"""Audit ``target_type`` of an answer; the target id is the pause's ``request_id``."""
MAX_PAUSES = 50
MAX_ARGS_BYTES = 256 * 1024
DECISIONS = frozenset({"approve", "deny", "step", "cancel"})
REASON_MAX = 1000
BREAKPOINT_KEY = "breakpoint"


def is_remote_request(request_id: str) -> bool:
    return isinstance(request_id, str) and request_id.startswith(REQUEST_PREFIX)


def _text(value: Any, limit: int) -> str:
    return text_storable(value if isinstance(value, str) else "")[0][:limit]


def _changed(pause: RemotePause) -> None:
    session_change_next(
        session_id=pause.session_id, kind=SessionChange.Kind.PAUSE, ref=pause.request_id
    )


def _checked(pause: Any) -> dict[str, Any]:
    if not isinstance(pause, dict):
        raise ValidationError("each pause must be an object")
    for field in ("id", "session"):
        value = pause.get(field)
        if not isinstance(value, str) or not value.strip() or len(value) > 200:
            raise ValidationError(f"a pause's {field} must be a string of 1 to 200 characters")
    if pause.get("kind") not in RemotePause.Kind.values:
        raise ValidationError(f"a pause's kind must be one of {RemotePause.Kind.values}")
    args = pause.get("args") or {}
    if not isinstance(args, dict):
        raise ValidationError("a pause's args must be an object")
    found = {"args": args, "payload": pause.get("payload")}
    if len(repr(found)) > MAX_ARGS_BYTES:
        raise ValidationError(f"a pause's args and payload must be under {MAX_ARGS_BYTES} bytes")
    kept, _ = storable(found)
    return {
        "pause_id": _text(pause["id"], 200),
        "app_session": _text(pause["session"], 200),
        "kind": pause["kind"],
        "agent": _text(pause.get("agent"), 128),
        "tool": _text(pause.get("tool"), 255),
        "call_id": _text(pause.get("call_id"), 200),
        "hint": _text(pause.get("hint"), 4000),
        "args": kept["args"],
        "payload": kept["payload"],
    }


def pauses_record(*, process: RemoteProcess, pauses: Any) -> list[dict[str, Any]]:
    """The pauses the process waits in (``[{id, session, kind, agent, tool, call_id, args,
    hint, payload}]``, ids its own), kept — a pause it names again is the one kept before,
    its answer too — and the answers it has yet to take: ``[{id, session, decision,
    payload, reason}]``. A pause of a session AgentDash has no spans of yet is left for a
    later poll. ``ValidationError`` for a list of the wrong shape."""
    if not isinstance(pauses, list) or len(pauses) > MAX_PAUSES:
        raise ValidationError(f"pauses must be a list of at most {MAX_PAUSES}")
    checked = [_checked(p) for p in pauses]
    sessions = {session_id_for(process.key, p["app_session"]) for p in checked}
    existing = sessions_existing(ids=sessions)
    answers = []
    for fields in checked:
        session_id = session_id_for(process.key, fields["app_session"])
        if session_id not in existing:
            continue
        pause = _pause_kept(process, session_id, fields)
        if pause.answer is not None and pause.status in (
            RemotePause.Status.ANSWERED, RemotePause.Status.TAKEN,
        ):  # fmt: skip
            answers.append({"id": pause.pause_id, "session": pause.app_session, **pause.answer})
    return answers


def _pause_kept(process: RemoteProcess, session_id: str, fields: dict[str, Any]) -> RemotePause:
    with transaction.atomic():
        pause, created = RemotePause.objects.get_or_create(
            key=process.key,
            app_session=fields["app_session"],
            pause_id=fields["pause_id"],
            defaults={
                **fields,
                "process": process,
                "session_id": session_id,
                "request_id": REQUEST_PREFIX + secrets.token_hex(8),
                "asked_at": timezone.now(),
            },
        )
        if created:
            _changed(pause)
            return pause
        again = pause.status == RemotePause.Status.ENDED  # asked again after its own end
        if pause.process_id != process.pk or again:
            pause.process = process
            if again:
                pause.status = RemotePause.Status.WAITING
                pause.ended_why = ""
                pause.asked_at = timezone.now()
            pause.save(update_fields=["process", "status", "ended_why", "asked_at"])
            _changed(pause)
    return pause


def _named(process: RemoteProcess, found: Any, what: str) -> list[tuple[str, str, Any]]:
    if not isinstance(found, list) or len(found) > MAX_PAUSES:
        raise ValidationError(f"{what} must be a list of at most {MAX_PAUSES}")
    named = []
    for item in found:
        if not isinstance(item, dict) or not all(
            isinstance(item.get(k), str) for k in ("id", "session")
        ):
            raise ValidationError(f"each of {what} must be an object with an id and a session")
        named.append((item["session"][:200], item["id"][:200], item))
    return named


def pauses_taken(*, process: RemoteProcess, taken: Any) -> None:
    """The process went on with these answers (``[{id, session}]``): not sent again."""
    for app_session, pause_id, _ in _named(process, taken, "taken"):
        with transaction.atomic():
            pause = RemotePause.objects.filter(
                key=process.key, app_session=app_session, pause_id=pause_id,
                status=RemotePause.Status.ANSWERED,
            ).first()  # fmt: skip
            if pause is not None:
                pause.status = RemotePause.Status.TAKEN
                pause.save(update_fields=["status"])
                _changed(pause)


def pauses_ended(*, process: RemoteProcess, ended: Any) -> None:
    """The process stopped waiting by its own rule (``[{id, session, why}]``: its timeout
    passed and it went on with its default answer): the pause is no longer answerable."""
    for app_session, pause_id, item in _named(process, ended, "ended"):
        with transaction.atomic():
            pause = RemotePause.objects.filter(
                key=process.key, app_session=app_session, pause_id=pause_id,
                status=RemotePause.Status.WAITING,
            ).first()  # fmt: skip
            if pause is not None:
                pause.status = RemotePause.Status.ENDED
                pause.ended_why = _text(item.get("why"), 255) or "ended by the app"
                pause.save(update_fields=["status", "ended_why"])
                _changed(pause)


def pause_answer(
    *,
    session: AgentSession,
    request_id: str,
    decision: str,
    payload: Any = None,
    reason: str = "",
    actor: Any,
) -> RemotePause:
    """A person's answer to a remote pause of ``session``, as for a local run's request
    (``runs.confirmations``): ``approve`` (the payload as it stands, or ``payload``; a
    breakpoint's ``args`` are what the tool receives), ``deny``, and for a breakpoint ``step``
    or ``cancel``. The session's owner or an operator only (``PermissionDenied``);
    ``ValidationError`` for what cannot be; ``ConflictError`` when it has an answer already
    or the app stopped waiting. Audited (``confirmation.answer``, target ``remote.pause``)."""
    owner_or_operator_required(session, actor)
    if not isinstance(decision, str) or decision not in DECISIONS:
        raise ValidationError({"decision": [f"must be one of {', '.join(sorted(DECISIONS))}"]})
    if len(reason) > REASON_MAX:
        raise ValidationError({"reason": [f"at most {REASON_MAX} characters"]})
    problem = value_problem({"payload": payload, "reason": reason})
    if problem:
        raise ValidationError({"payload": [f"cannot be stored: {problem}"]})
    with transaction.atomic():
        pause = RemotePause.objects.filter(session=session, request_id=request_id).first()
        if pause is None:
            raise ValidationError({"request_id": ["no such confirmation request"]})
        if pause.status != RemotePause.Status.WAITING:
            status = pause.get_status_display()
            raise ConflictError(f"confirmation request {request_id}: {status}")
        answer = {"decision": decision, "payload": _payload(pause, decision, payload),
                  "reason": reason}  # fmt: skip
        done = RemotePause.objects.filter(pk=pause.pk, status=RemotePause.Status.WAITING).update(
            status=RemotePause.Status.ANSWERED,
            answer=answer,
            answered_by=actor if getattr(actor, "is_authenticated", False) else None,
            answered_at=timezone.now(),
        )
        if not done:
            raise ConflictError(f"confirmation request {request_id} is answered already")
        pause.refresh_from_db()
        _changed(pause)
        audit_record(
            actor=actor,
            action="confirmation.answer",
            target_type=PAUSE_TARGET,
            target_id=pause.request_id,
            before={"tool": pause.tool, "args": pause.args, "hint": pause.hint,
                    "payload": pause.payload},
            after=answer,
            reason=reason,
        )  # fmt: skip
    return pause


def _payload(pause: RemotePause, decision: str, payload: Any) -> Any:
    """The answer's payload: the person's (edited) one, else the one asked with; a
    breakpoint's still names its breakpoint, and its ``args`` are an object."""
    given = pause.payload if payload is None else payload
    if pause.kind != RemotePause.Kind.BREAKPOINT:
        if decision in ("step", "cancel"):
            raise ValidationError({"decision": [f"{decision} answers breakpoints only"]})
        return given
    if not isinstance(given, dict):
        raise ValidationError({"payload": ["a breakpoint's payload is a JSON object"]})
    asked = pause.payload if isinstance(pause.payload, dict) else {}
    given = {**given, BREAKPOINT_KEY: asked.get(BREAKPOINT_KEY, "")}
    if "args" in given and not isinstance(given["args"], dict):
        raise ValidationError({"payload": ["args must be a JSON object"]})
    return given


# ── reads ────────────────────────────────────────────────────────────────────────────────
def session_pauses_pending(*, session_id: str) -> list[dict[str, Any]]:
    """The session's remote pauses that wait for an answer, oldest first, in the shape of
    a local run's request (``request_id``, ``agent``, ``tool``, ``args``, ``hint``,
    ``payload``, ``call_id``, ``asked_at`` as Unix seconds) with ``remote``: the process
    that waits (``host``, ``pid``, ``connected``)."""
    rows = RemotePause.objects.filter(
        session_id=session_id, status=RemotePause.Status.WAITING
    ).select_related("process")
    return [
        {
            "request_id": p.request_id,
            "invocation_id": "",
            "agent": p.agent,
            "tool": p.tool,
            "args": p.args,
            "hint": p.hint,
            "payload": p.payload,
            "call_id": p.call_id,
            "asked_at": p.asked_at.timestamp(),
            "remote": {
                "host": p.process.host if p.process else "",
                "pid": p.process.pid if p.process else None,
                "connected": bool(p.process and is_connected(p.process)),
            },
        }
        for p in rows
    ]


def pauses_waiting(*, limit: int = 200) -> list[RemotePause]:
    """Every remote pause that waits, oldest first (the operators' list of waiting runs)."""
    rows = RemotePause.objects.filter(status=RemotePause.Status.WAITING)
    return list(rows.select_related("session", "session__owner", "process")[:limit])


def pauses_load(refs: set[RowKey]) -> dict[RowKey, Item]:
    """Pauses as change items (kind ``pause``): ``{request_id, status, kind, tool}``."""
    if not refs:
        return {}
    rows = RemotePause.objects.filter(
        session_id__in={s for s, _ in refs}, request_id__in={r for _, r in refs}
    )
    return items_of_rows(
        refs,
        rows,
        session_of=lambda p: p.session_id,
        ref_of=lambda p: p.request_id,
        item_of=lambda p: {
            "request_id": p.request_id,
            "status": p.status,
            "kind": p.kind,
            "tool": p.tool,
        },
    )
