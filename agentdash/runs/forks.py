"""A fork as a person asks for it: the session forked (``agent_sessions.forks``) and its
callback switches carried over and changed (``controls.session_switches``), together."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from google.genai import types

from agentdash.agent_sessions.forks import session_fork
from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.controls.session_switches import session_switches_fork, switch_overrides_clean
from agentdash.core.permissions import OperatorRequired, PermissionRequired, is_operator
from agentdash.registry.loader import AgentNotRegisteredError
from agentdash.registry.selectors import agent_callbacks, agent_get
from agentdash.runs.replays import is_question_part
from agentdash.runs.services import run_enqueue
from runtime import LlmAgent
from runtime.telemetry.attributes import CONTENT_CAPTURE

SWITCH_CALLBACKS = "controls.change_callbacksetting"


def fork_create(
    *,
    parent: AgentSession,
    event_id: str,
    actor: Any,
    state: Mapping[str, Any] | None = None,
    switches: Any = None,
) -> AgentSession:
    """Fork ``parent`` at its event ``event_id`` (``agent_sessions.forks.session_fork``:
    events, state as of it, ``state`` merged over it) and give the fork the parent's session
    switches with ``switches`` applied on top (``[{"agent", "name", "enabled"}]``, callbacks
    of the session's agent tree), all in one transaction, each part audited.

    A fork made at a user's question (text or files, not an approval's answer) answers it:
    a run of the fork's agent is queued with it (the question is stored already, as a copy;
    the run does not append it again), so the fork shows what the agent says now, under
    the fork's state and switches. A fork of an agent no longer configured is made without.

    Only operators who may switch callbacks may ask for ``switches`` (``PermissionDenied``);
    the parent's own switches are carried over for anyone who may fork. Raises
    ``ValidationError`` (keys ``event_id``, ``state``, ``switches``) before storing anything.
    """
    overrides = []
    if switches is not None:
        if not is_operator(actor):
            raise OperatorRequired("only operators may switch callbacks")
        if not actor.has_perm(SWITCH_CALLBACKS):
            raise PermissionRequired(SWITCH_CALLBACKS, "switching callbacks is not allowed")
        overrides = switch_overrides_clean(switches)
        known = _switchable(parent.app_name)
        unknown = [o for o in overrides if (o.agent, o.name) not in known]
        if unknown:
            names = ", ".join(f"{o.agent}.{o.name}" for o in unknown[:5])
            raise ValidationError(
                {"switches": [f"not a callback of agent {parent.app_name!r}'s tree: {names}"]}
            )
    with transaction.atomic():
        fork = session_fork(parent=parent, event_id=event_id, actor=actor, state=state)
        session_switches_fork(
            source_id=parent.pk,
            target_id=fork.pk,
            overrides=overrides,
            actor=actor,
            reason=f"fork of session {parent.pk}",
        )
        question = _question(parent.pk, event_id)
        if question is not None and _configured(fork.app_name):
            run_enqueue(
                session=fork,
                agent_name=fork.app_name,
                message=question,
                requested_by=actor,
                message_stored=True,
            )
    return fork


def _question(session_id: str, event_id: str) -> types.Content | None:
    """The event's content when it is a user's question (text or files), else ``None``."""
    found = (
        SessionEvent.objects.filter(session_id=session_id, event_id=event_id, author="user")
        .values_list("data", flat=True)
        .first()
    )
    content = (found or {}).get("content") or {}
    parts = [p for p in content.get("parts") or [] if isinstance(p, dict)]
    if any(p.get("function_response") or p.get("function_call") for p in parts):
        return None  # an approval's answer, not a question
    asked = [p for p in parts if is_question_part(p)]
    return types.Content.model_validate({"role": "user", "parts": asked}) if asked else None


def _configured(agent_name: str) -> bool:
    try:
        agent_get(name=agent_name)
    except AgentNotRegisteredError:
        return False
    return True


def _switchable(agent_name: str) -> set[tuple[str, str]]:
    """``(agent, callback)`` of every callback an operator may switch in the tree, the
    built-in content capture of each LLM agent included; empty for an agent no longer
    configured."""
    try:
        root = agent_get(name=agent_name)
        callbacks = agent_callbacks(name=agent_name)
    except AgentNotRegisteredError:
        return set()
    found = {(c["agent"], c["name"]) for c in callbacks}
    found |= {(a.name, CONTENT_CAPTURE) for a in root.walk() if isinstance(a, LlmAgent)}
    return found
