"""The stored instructions as agents read them while they run: one database read in a worker
thread per model call, for the runtime's async request building."""

from __future__ import annotations

from django.db import DatabaseError

from agentdash.core.threads import in_worker_thread
from agentdash.instructions.selectors import instruction_current
from agentdash.instructions.versions import CODE, InstructionUnavailableError
from runtime.agents.instructions import InstructionView


async def instruction_view(*, agent_name: str, default: str) -> InstructionView:
    """``agent_name``'s newest stored version, or ``default`` as version ``code``. Raises
    :class:`InstructionUnavailableError` when the database cannot be read."""
    try:
        row = await in_worker_thread(instruction_current)(agent_name=agent_name)
    except DatabaseError as exc:
        raise InstructionUnavailableError(
            f"the instruction of {agent_name} could not be read: {exc}"
        ) from exc
    if row is None:
        return InstructionView(default, CODE)
    return InstructionView(row.text, row.label)
