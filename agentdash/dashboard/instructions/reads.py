"""Which agents read a stored instruction: those whose code gives ``stored_instruction``, in
the tree of every configured agent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentdash.instructions.agent_instructions import StoredInstruction
from agentdash.instructions.selectors import instruction_heads
from agentdash.registry.selectors import agent_get, agent_list
from runtime.agents.base_agent import BaseAgent


@dataclass(frozen=True)
class Instructed:
    """An agent that reads a stored instruction: its name, the root agent it serves in, the
    instruction its code gives (version ``code``) and its current stored version, if any."""

    name: str
    root: str
    code_text: str
    current: Any  # its stored version (instructions.InstructionVersion), or None

    @property
    def text(self) -> str:
        return self.current.text if self.current else self.code_text

    @property
    def version(self) -> int:
        return self.current.version if self.current else 0


def instructed_agents() -> list[Instructed]:
    """Every agent that reads a stored instruction, by name."""
    heads = instruction_heads()
    found: dict[str, Instructed] = {}
    for record in agent_list():
        try:
            root = agent_get(name=record.name)
        except LookupError:
            continue
        for agent in _tree(root):
            instruction = getattr(agent, "instruction", None)
            if isinstance(instruction, StoredInstruction) and agent.name not in found:
                found[agent.name] = Instructed(agent.name, record.name, instruction.default,
                                               heads.get(agent.name))  # fmt: skip
    return [found[name] for name in sorted(found)]


def instructed_agent(*, name: str) -> Instructed | None:
    return next((a for a in instructed_agents() if a.name == name), None)


def _tree(agent: BaseAgent) -> list[BaseAgent]:
    out = [agent]
    for sub in agent.sub_agents:
        out.extend(_tree(sub))
    return out
