"""Agents from settings: ``AGENTDASH["AGENTS"]`` lists ``"package.module:attribute"`` paths
(``:root_agent`` when the attribute is left out), each naming one root agent object."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from django.core.exceptions import ImproperlyConfigured

from agentdash.core.conf import agentdash_setting
from runtime import BaseAgent

DEFAULT_ATTRIBUTE = "root_agent"

_lock = threading.RLock()  # re-entrant: an agent module may load another agent
_by_path: dict[str, BaseAgent] = {}


class AgentNotRegisteredError(LookupError):
    """No configured root agent has that name."""


@dataclass(frozen=True, slots=True)
class LoadedAgent:
    """A root agent and the path it was loaded from."""

    name: str
    dotted_path: str
    agent: BaseAgent


def configured_paths() -> list[str]:
    """The paths in ``AGENTDASH["AGENTS"]``, in order."""
    return list(agentdash_setting("AGENTS") or [])


def agent_import(*, dotted_path: str) -> BaseAgent:
    """The agent object at ``dotted_path``, imported once per process.

    Raises ``ImproperlyConfigured`` naming the path when the module cannot be imported (any
    exception while importing it counts), the attribute is missing, or it is not a
    ``runtime.BaseAgent``.
    """
    with _lock:
        cached = _by_path.get(dotted_path)
        if cached is not None:
            return cached
        agent = _import(dotted_path)
        _by_path[dotted_path] = agent
        return agent


def _import(dotted_path: str) -> BaseAgent:
    where = f"AGENTDASH['AGENTS'] entry {dotted_path!r}"
    module_name, _, attribute = dotted_path.strip().partition(":")
    attribute = attribute or DEFAULT_ATTRIBUTE
    if not module_name or not all(p.isidentifier() for p in module_name.split(".")):
        raise ImproperlyConfigured(f"{where} is not of the form 'package.module:attribute'.")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise ImproperlyConfigured(
            f"{where}: cannot import module {module_name!r}: {type(exc).__name__}: {exc}"
        ) from exc
    if not hasattr(module, attribute):
        raise ImproperlyConfigured(f"{where}: module {module_name!r} has no {attribute!r}.")
    agent = getattr(module, attribute)
    if not isinstance(agent, BaseAgent):
        raise ImproperlyConfigured(f"{where} is a {type(agent).__name__}, not a runtime.BaseAgent.")
    return agent


def agents_load_entries(*, paths: Sequence[str] | None = None) -> dict[str, LoadedAgent]:
    """Every configured root agent (or those of ``paths``) by name, in settings order.

    Raises ``ImproperlyConfigured`` naming the path for a path that does not load, and naming
    both paths when two root agents share a name.
    """
    entries: dict[str, LoadedAgent] = {}
    for path in configured_paths() if paths is None else paths:
        agent = agent_import(dotted_path=path)
        other = entries.get(agent.name)
        if other is not None:
            raise ImproperlyConfigured(
                f"AGENTDASH['AGENTS'] entries {other.dotted_path!r} and {path!r} both define "
                f"a root agent named {agent.name!r}; root agent names must be unique."
            )
        entries[agent.name] = LoadedAgent(name=agent.name, dotted_path=path, agent=agent)
    return entries


def agents_load(*, paths: Sequence[str] | None = None) -> dict[str, BaseAgent]:
    """``{root agent name: agent}`` for every configured path (see :func:`agents_load_entries`)."""
    return {name: entry.agent for name, entry in agents_load_entries(paths=paths).items()}


def agents_cache_clear() -> None:
    """Forget imported agents (tests); modules stay imported, so this re-reads attributes."""
    with _lock:
        _by_path.clear()
