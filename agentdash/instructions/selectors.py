"""Reads of the stored instructions."""

from __future__ import annotations

from django.db.models import OuterRef, QuerySet, Subquery

from agentdash.instructions.models import InstructionVersion


def instruction_current(*, agent_name: str) -> InstructionVersion | None:
    """The version ``agent_name`` reads now (its newest), or ``None``: the code's applies."""
    return InstructionVersion.objects.filter(agent_name=agent_name).order_by("-version").first()


def instruction_history(*, agent_name: str) -> QuerySet[InstructionVersion]:
    """Every version of ``agent_name``'s instruction, newest first."""
    return InstructionVersion.objects.filter(agent_name=agent_name).order_by("-version")


def instruction_version_get(*, agent_name: str, version: int) -> InstructionVersion | None:
    return InstructionVersion.objects.filter(agent_name=agent_name, version=version).first()


def instruction_heads() -> dict[str, InstructionVersion]:
    """Each agent's current version, by agent name (agents with a stored version only)."""
    newest = (
        InstructionVersion.objects.filter(agent_name=OuterRef("agent_name"))
        .order_by("-version")
        .values("version")[:1]
    )
    rows = InstructionVersion.objects.filter(version=Subquery(newest))
    return {row.agent_name: row for row in rows}
