"""Writes of the registry: the database mirror of the configured agents."""

from __future__ import annotations

from django.db import DEFAULT_DB_ALIAS, connections, transaction

from agentdash.registry.describe import (
    agent_callback_list,
    agent_model_name,
    agent_tool_names,
    agent_tree,
)
from agentdash.registry.loader import agents_load_entries
from agentdash.registry.models import AgentRecord


def agents_mirror(*, using: str = DEFAULT_DB_ALIAS) -> list[AgentRecord]:
    """Upsert one :class:`AgentRecord` per configured root agent (``available=True``) and mark
    every other row ``available=False``; rows are never deleted. Idempotent.

    Returns the rows of the configured agents, in settings order. Raises
    ``ImproperlyConfigured`` (from the loader) when a configured path does not load; nothing
    is written then. Does nothing when the registry table does not exist (a ``migrate`` that
    unapplied it).
    """
    if AgentRecord._meta.db_table not in connections[using].introspection.table_names():
        return []
    entries = agents_load_entries()
    records = []
    with transaction.atomic(using=using):
        for entry in entries.values():
            agent = entry.agent
            tree = agent_tree(agent=agent)
            record, _ = AgentRecord.objects.using(using).update_or_create(
                name=entry.name,
                defaults={
                    "dotted_path": entry.dotted_path,
                    "description": agent.description,
                    "model": agent_model_name(agent=agent),
                    "tools": agent_tool_names(agent=agent),
                    "callbacks": agent_callback_list(agent=agent),
                    "sub_agents": tree["sub_agents"],
                    "available": True,
                },
            )
            records.append(record)
        AgentRecord.objects.using(using).exclude(name__in=list(entries)).update(available=False)
    return records
