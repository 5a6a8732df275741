"""Reads of the registry: mirrored rows for listing, loaded objects for running."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from agentdash.registry.describe import agent_callback_list
from agentdash.registry.loader import AgentNotRegisteredError, agents_load
from agentdash.registry.models import AgentRecord
from runtime import BaseAgent


def agent_list(*, include_unavailable: bool = False) -> QuerySet[AgentRecord]:
    """Mirrored agents by name; only those configured now unless ``include_unavailable``."""
    records = AgentRecord.objects.order_by("name")
    return records if include_unavailable else records.filter(available=True)


def agent_get(*, name: str) -> BaseAgent:
    """The loaded root agent called ``name``. Raises :class:`AgentNotRegisteredError` (a
    ``LookupError``) listing the configured names when there is none."""
    agents = agents_load()
    try:
        return agents[name]
    except KeyError:
        known = ", ".join(sorted(agents)) or "(none)"
        raise AgentNotRegisteredError(
            f"no configured agent is named {name!r}; configured: {known}"
        ) from None


def agent_callbacks(*, name: str) -> list[dict[str, Any]]:
    """Every callback in the tree of root agent ``name``, from the loaded object (see
    :func:`agentdash.registry.describe.agent_callback_list`). Raises like :func:`agent_get`."""
    return agent_callback_list(agent=agent_get(name=name))


def agent_record_find(*, name: str) -> AgentRecord | None:
    """The registry's row of the agent of that name (configured or not), or ``None``."""
    return AgentRecord.objects.filter(name=name).first()


def agent_model_of(*, name: str) -> str | None:
    """The model the agent of that name was registered with, or ``None`` for no such agent."""
    found = AgentRecord.objects.filter(name=name).values_list("model", flat=True).first()
    return found


def agent_known(*, name: str) -> bool:
    """Whether the registry has an agent of that name."""
    return AgentRecord.objects.filter(name=name).exists()
