"""An agent's instruction kept in AgentDash (docs/INSTRUCTIONS.md): the public binding of
``runtime``'s instruction providers to the ``instructions`` app, for any agent served here.

    from agentdash.instructions.agent_instructions import stored_instruction
    root_agent = Agent(..., instruction=stored_instruction("You are a careful analyst. ..."))

The agent reads its newest stored version at every model call, so an operator's edit applies
to its next step; until one is saved, the text given here applies (version ``code``). The
text is a template either way: ``{key}`` filled from session state as ADK fills a string
instruction. This module imports without Django: in ``python -m runtime chat`` the text
given here applies. A stored instruction that cannot be read (a database outage) fails the
model call with :class:`InstructionUnavailableError`: an agent never runs on an instruction
an operator replaced.
"""

from __future__ import annotations

from types import ModuleType

from agentdash.instructions.versions import CODE, InstructionUnavailableError
from runtime.agents.instructions import InstructionView
from runtime.contexts.readonly_context import ReadonlyContext

__all__ = ["InstructionUnavailableError", "StoredInstruction", "stored_instruction"]


class StoredInstruction:
    """An instruction provider: the running agent's stored instruction, or ``default``."""

    def __init__(self, default: str) -> None:
        self.default = default

    async def __call__(self, ctx: ReadonlyContext) -> InstructionView:
        stored = _stored()
        if stored is None:
            return InstructionView(self.default, CODE)
        view: InstructionView = await stored.instruction_view(
            agent_name=ctx.agent_name, default=self.default
        )
        return view

    def __repr__(self) -> str:
        return f"stored_instruction({self.default[:40]!r}…)"


def stored_instruction(default: str) -> StoredInstruction:
    """The instruction of the agent it is given to, kept in AgentDash; ``default`` until an
    operator saves a version (and where Django is not set up)."""
    return StoredInstruction(default)


def _stored() -> ModuleType | None:
    """:mod:`agentdash.instructions.stored_instructions` once Django is set up, else ``None``
    (imported here: it reads the app's models, which need Django set up first)."""
    from django.apps import apps

    if not (apps.ready and apps.is_installed("agentdash.instructions")):
        return None
    from agentdash.instructions import stored_instructions

    return stored_instructions
