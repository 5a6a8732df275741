"""Writes of remote processes: a process registering what it runs, and being heard from."""

from __future__ import annotations

import json
import secrets
from datetime import timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.utils import timezone

from agentdash.agent_sessions.external import sessions_existing
from agentdash.agent_sessions.selectors import (
    operator_edits_after,
    session_last_event_seq,
    session_state_view,
)
from agentdash.agent_sessions.services import session_state_mirror
from agentdash.core.hygiene import text_storable
from agentdash.ingest.models import IngestKey
from agentdash.ingest.services import session_id_for
from agentdash.remote.models import RemoteProcess
from runtime.sessions.base_session_service import SessionNotFoundError

MAX_AGENTS = 200
MAX_PER_AGENT = 100
MAX_NAME = 128
SEEN_EVERY = timedelta(seconds=2)
SLOTS = frozenset(
    {
        "before_agent", "after_agent", "before_model", "after_model", "before_tool",
        "after_tool", "on_model_error", "on_tool_error", "callbacks",
    }
)  # fmt: skip


def _name(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAME:
        raise ValidationError(f"{what} must be a name of 1 to {MAX_NAME} characters")
    return text_storable(value.strip())[0]


def agents_checked(agents: Any) -> list[dict[str, Any]]:
    """``agents`` as a process registers them — ``[{name, callbacks: [{slot, name}], tools:
    [name]}]`` — checked and made storable; ``ValidationError`` saying what is wrong."""
    if not isinstance(agents, list) or len(agents) > MAX_AGENTS:
        raise ValidationError(f"agents must be a list of at most {MAX_AGENTS}")
    found = []
    for agent in agents:
        if not isinstance(agent, dict):
            raise ValidationError("each agent must be an object")
        callbacks = agent.get("callbacks") or []
        tools = agent.get("tools") or []
        if not isinstance(callbacks, list) or not isinstance(tools, list):
            raise ValidationError("an agent's callbacks and tools must be lists")
        if len(callbacks) > MAX_PER_AGENT or len(tools) > MAX_PER_AGENT:
            raise ValidationError(f"at most {MAX_PER_AGENT} callbacks and tools per agent")
        checked = []
        for callback in callbacks:
            if not isinstance(callback, dict) or callback.get("slot") not in SLOTS:
                raise ValidationError(f"a callback's slot must be one of {sorted(SLOTS)}")
            checked.append(
                {"slot": callback["slot"], "name": _name(callback.get("name"), "a callback")}
            )
        found.append(
            {
                "name": _name(agent.get("name"), "an agent"),
                "callbacks": checked,
                "tools": [_name(tool, "a tool") for tool in tools],
            }
        )
    return found


def remote_process_register(
    *,
    key: IngestKey,
    host: str,
    pid: int | None,
    versions: dict[str, Any],
    agents: Any,
    root_agent: str,
) -> RemoteProcess:
    """A process of ``key``'s app connecting: what it runs, under a token of its own (the
    client sends it with every request after). ``ValidationError`` for what cannot be."""
    checked = agents_checked(agents)
    if not isinstance(versions, dict) or len(versions) > 50:
        raise ValidationError("versions must be an object of at most 50 entries")
    return RemoteProcess.objects.create(
        key=key,
        token=secrets.token_hex(16),
        host=text_storable(str(host))[0][:255],
        pid=pid if isinstance(pid, int) and 0 < pid < 2**31 else None,
        versions={
            text_storable(str(k))[0][:64]: text_storable(str(v))[0][:64]
            for k, v in versions.items()
        },
        agents=checked,
        root_agent=_name(root_agent, "the root agent") if root_agent else "",
        last_seen=timezone.now(),
    )


def remote_process_seen(*, process: RemoteProcess) -> None:
    """The process asked again: its ``last_seen`` moves (at most every ``SEEN_EVERY``)."""
    now = timezone.now()
    if now - process.last_seen >= SEEN_EVERY:
        RemoteProcess.objects.filter(pk=process.pk).update(last_seen=now)
        process.last_seen = now


MAX_SESSIONS = 50
MAX_STATE_BYTES = 256 * 1024


def remote_states_record(*, process: RemoteProcess, states: Any) -> list[str]:
    """The state each of the process's sessions has in the app (``{its session id: state}``),
    mirrored into the AgentDash session its spans went to: the keys that differ (``temp:``
    ones aside, as ADK never persists them) become one event authored by the app's root agent,
    so the page shows the state the app runs with and an operator's edit is based on it.
    A session AgentDash does not have yet (its spans are on their way) is left for a later
    report: the sessions left are returned. ``ValidationError`` for a report of the wrong
    shape."""
    if not isinstance(states, dict) or len(states) > MAX_SESSIONS:
        raise ValidationError(f"states must be an object of at most {MAX_SESSIONS} sessions")
    waiting = []
    for app_session, state in states.items():
        if not isinstance(state, dict):
            raise ValidationError("each session's state must be an object")
        if len(json.dumps(state, default=str)) > MAX_STATE_BYTES:
            continue  # too large to mirror: the page keeps the last one it had
        session_id = session_id_for(process.key, str(app_session)[:200])
        try:
            shown = session_state_view(session_id=session_id).state
        except SessionNotFoundError:
            waiting.append(str(app_session))
            continue
        delta = {
            str(k): v
            for k, v in state.items()
            if not str(k).startswith("temp:") and shown.get(k) != v
        }
        if delta:
            session_state_mirror(
                session_id=session_id, author=process.root_agent or "agent", delta=delta
            )
    return waiting


def remote_edits(*, process: RemoteProcess, sessions: list[str]) -> list[dict[str, Any]]:
    """The operators' state edits the process has not applied yet, for the sessions it names:
    ``[{id, session, delta}]`` (``id``: the edit's event seq, ``session``: the app's id). A
    session named for the first time starts after the edits already there (those were made
    for an earlier run of the app, not this process)."""
    cursors = dict(process.cursors)
    found: list[dict[str, Any]] = []
    changed = False
    named = {session_id_for(process.key, s): s for s in sessions[:MAX_SESSIONS]}
    existing = sessions_existing(ids=set(named) - set(cursors))
    for session_id, app_session in named.items():
        if session_id not in cursors:
            if session_id in existing:  # else: named again once its spans made it
                cursors[session_id] = session_last_event_seq(session_id=session_id)
                changed = True
            continue
        for seq, delta in operator_edits_after(
            session_id=session_id, after_seq=cursors[session_id]
        ):
            found.append({"id": seq, "session": app_session, "delta": delta})
    if changed:
        RemoteProcess.objects.filter(pk=process.pk).update(cursors=cursors)
        process.cursors = cursors
    return found


def remote_edits_applied(*, process: RemoteProcess, applied: Any) -> None:
    """The process applied the edits up to these ids (``{its session id: edit id}``): they
    are not sent again."""
    if not isinstance(applied, dict):
        raise ValidationError("applied must be an object of session → edit id")
    cursors = dict(process.cursors)
    for app_session, seq in list(applied.items())[:MAX_SESSIONS]:
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
            raise ValidationError("an applied edit id must be a whole number")
        session_id = session_id_for(process.key, str(app_session)[:200])
        if session_id in cursors and seq > cursors[session_id]:
            cursors[session_id] = min(seq, session_last_event_seq(session_id=session_id))
    if cursors != process.cursors:
        RemoteProcess.objects.filter(pk=process.pk).update(cursors=cursors)
        process.cursors = cursors
