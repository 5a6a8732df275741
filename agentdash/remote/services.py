"""Writes of remote processes: a process registering what it runs, and being heard from."""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.utils import timezone

from agentdash.core.hygiene import text_storable
from agentdash.ingest.models import IngestKey
from agentdash.remote.models import RemoteProcess

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
