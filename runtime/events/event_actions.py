"""What an event asks the framework to do besides carrying content."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class EventActions(BaseModel):
    """Side effects attached to an :class:`Event`.

    ``state_delta`` is applied to the session's state when the event is appended, key by key;
    ``temp:`` keys in it live only for the current invocation and are never stored.
    ``artifact_delta`` maps an artifact file name to the version the event saved.
    ``skip_summarization`` makes a function-response event the agent's final response.
    ``transfer_to_agent`` names the agent that takes over; ``escalate`` ends the enclosing
    :class:`LoopAgent`.
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    state_delta: dict[str, Any] = Field(default_factory=dict)
    artifact_delta: dict[str, int] = Field(default_factory=dict)
    skip_summarization: bool | None = None
    transfer_to_agent: str | None = None
    escalate: bool | None = None
    requested_auth_configs: dict[str, Any] = Field(default_factory=dict)
    requested_tool_confirmations: dict[str, Any] = Field(default_factory=dict)
    """Function call id → the ``ToolConfirmation`` its tool asked for."""

    def merge(self, other: EventActions) -> None:
        """Fold ``other`` into this one; ``other`` wins on conflicting keys and flags."""
        self.state_delta.update(other.state_delta)
        self.artifact_delta.update(other.artifact_delta)
        self.requested_auth_configs.update(other.requested_auth_configs)
        self.requested_tool_confirmations.update(other.requested_tool_confirmations)
        if other.skip_summarization is not None:
            self.skip_summarization = other.skip_summarization
        if other.transfer_to_agent is not None:
            self.transfer_to_agent = other.transfer_to_agent
        if other.escalate is not None:
            self.escalate = other.escalate

    def is_empty(self) -> bool:
        return not (
            self.state_delta
            or self.artifact_delta
            or self.requested_auth_configs
            or self.requested_tool_confirmations
            or self.skip_summarization
            or self.transfer_to_agent
            or self.escalate
        )
