"""A fork as a person asks for it: the session forked (``agent_sessions.forks``) and its
callback switches carried over and changed (``controls.session_switches``), together."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from agentdash.agent_sessions.forks import session_fork
from agentdash.agent_sessions.models import AgentSession
from agentdash.controls.session_switches import session_switches_fork, switch_overrides_clean
from agentdash.core.permissions import is_operator
from agentdash.registry.loader import AgentNotRegisteredError
from agentdash.registry.selectors import agent_callbacks, agent_get
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

    Only operators who may switch callbacks may ask for ``switches`` (``PermissionDenied``);
    the parent's own switches are carried over for anyone who may fork. Raises
    ``ValidationError`` (keys ``event_id``, ``state``, ``switches``) before storing anything.
    """
    overrides = []
    if switches is not None:
        if not (is_operator(actor) and actor.has_perm(SWITCH_CALLBACKS)):
            raise PermissionDenied("only operators may switch callbacks")
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
    return fork


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
