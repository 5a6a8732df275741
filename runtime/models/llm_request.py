"""What an agent sends to a model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from runtime.tools.base_tool import BaseTool


class LlmRequest(BaseModel):
    """A model call: the conversation so far, the generation config (system instruction and
    tool declarations included) and the tools by name.

    ``before_model`` callbacks may edit it in place; the edited request is what the model gets.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    model: str | None = None
    contents: list[types.Content] = Field(default_factory=list)
    config: types.GenerateContentConfig = Field(default_factory=types.GenerateContentConfig)
    tools_dict: dict[str, Any] = Field(default_factory=dict, exclude=True)
    instruction_version: str = Field(default="", exclude=True)
    """The version of the agent's instruction in this request, when its provider named one
    (``runtime.agents.instructions.InstructionView``)."""

    def append_instructions(self, instructions: list[str]) -> None:
        """Add text to the system instruction, one paragraph per item."""
        text = "\n\n".join(i for i in instructions if i)
        if not text:
            return
        current = self.config.system_instruction
        if current is None:
            self.config.system_instruction = text
        elif isinstance(current, str):
            self.config.system_instruction = f"{current}\n\n{text}"
        elif isinstance(current, types.Content):
            current.parts = [*(current.parts or []), types.Part(text=text)]
        else:
            self.config.system_instruction = f"{system_instruction_text(self)}\n\n{text}"

    def append_tools(self, tools: list[BaseTool]) -> None:
        """Declare ``tools`` to the model and remember them by name."""
        declarations = []
        for tool in tools:
            declaration = tool.get_declaration()
            if declaration is not None:
                declarations.append(declaration)
            self.tools_dict[tool.name] = tool
        if not declarations:
            return
        existing = self.config.tools or []
        for t in existing:
            if isinstance(t, types.Tool) and t.function_declarations is not None:
                t.function_declarations.extend(declarations)
                return
        self.config.tools = [*existing, types.Tool(function_declarations=declarations)]


def system_instruction_text(request: LlmRequest) -> str:
    """The system instruction as plain text, whatever form the config holds it in."""
    si: Any = request.config.system_instruction
    if si is None:
        return ""
    if isinstance(si, str):
        return si
    if isinstance(si, types.Content):
        return "\n".join(p.text for p in si.parts or [] if p.text)
    if isinstance(si, types.Part):
        return si.text or ""
    if isinstance(si, list):
        return "\n".join(x if isinstance(x, str) else (getattr(x, "text", "") or "") for x in si)
    return str(si)


CONTEXT_PREFIX = "For context:"
"""How other agents' turns start when retold to a model as user-side content."""


def is_retold(content: types.Content) -> bool:
    """Whether ``content`` retells other agents' turns: its first part is exactly
    :data:`CONTEXT_PREFIX` and more parts follow (the shape the runtime builds, never a
    user's message that merely starts with those words)."""
    parts = content.parts or []
    return len(parts) > 1 and parts[0].text == CONTEXT_PREFIX


def latest_user_text(request: LlmRequest) -> str:
    """The text of the last user turn in ``request`` (not other agents' retold turns)."""
    for content in reversed(request.contents):
        parts = content.parts or []
        text = "".join(p.text for p in parts if p.text and not p.thought)
        if content.role == "user" and text and not is_retold(content):
            return text
    return ""
