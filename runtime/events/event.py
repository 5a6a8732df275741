"""One entry of a session's history."""

from __future__ import annotations

import time
import uuid
from typing import Any

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field

from runtime.events.event_actions import EventActions


def new_event_id() -> str:
    return uuid.uuid4().hex[:16]


def ends_turn(
    *,
    skip_summarization: bool,
    long_running: bool,
    calls: bool,
    responses: bool,
    partial: bool,
    trailing_code_result: bool,
) -> bool:
    """ADK's rule for the event that ends an agent's turn (``Event.is_final_response``), over
    what it looks at: for a reader of stored events that does not build the ``Event``."""
    if skip_summarization or long_running:
        return True
    return not (calls or responses or partial or trailing_code_result)


class Event(BaseModel):
    """Something an author (``"user"``, an agent's name, ``"operator"``) added to a session.

    Events are values: the runner and session services never mutate one after it was appended.
    ``partial`` events (streamed text chunks) are yielded to the caller but never stored.
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    id: str = Field(default_factory=new_event_id)
    invocation_id: str = ""
    author: str
    content: types.Content | None = None
    actions: EventActions = Field(default_factory=EventActions)
    branch: str | None = None
    timestamp: float = Field(default_factory=time.time)
    partial: bool | None = None
    turn_complete: bool | None = None
    finish_reason: types.FinishReason | None = None
    error_code: str | None = None
    error_message: str | None = None
    usage_metadata: types.GenerateContentResponseUsageMetadata | None = None
    grounding_metadata: types.GroundingMetadata | None = None
    long_running_tool_ids: set[str] | None = None
    custom_metadata: dict[str, Any] | None = None

    def get_function_calls(self) -> list[types.FunctionCall]:
        if not self.content or not self.content.parts:
            return []
        return [p.function_call for p in self.content.parts if p.function_call]

    def get_function_responses(self) -> list[types.FunctionResponse]:
        if not self.content or not self.content.parts:
            return []
        return [p.function_response for p in self.content.parts if p.function_response]

    def has_trailing_code_execution_result(self) -> bool:
        """True when the last part is a code execution's result: the model has yet to read it."""
        parts = self.content.parts if self.content and self.content.parts else []
        return bool(parts) and parts[-1].code_execution_result is not None

    def is_final_response(self) -> bool:
        """True for the event that ends an agent's turn, as in ADK.

        A response whose summarization is skipped, or that started a long-running tool, is
        final; otherwise an event is final when it is complete (not partial) and carries no
        function call or function response and does not end with a code execution's result.
        """
        return ends_turn(
            skip_summarization=bool(self.actions.skip_summarization),
            long_running=bool(self.long_running_tool_ids),
            calls=bool(self.get_function_calls()),
            responses=bool(self.get_function_responses()),
            partial=bool(self.partial),
            trailing_code_result=self.has_trailing_code_execution_result(),
        )

    @property
    def text(self) -> str:
        """The event's text parts joined, ``""`` when it has none (a convenience, not ADK)."""
        if not self.content or not self.content.parts:
            return ""
        return "".join(p.text for p in self.content.parts if p.text and not p.thought)
