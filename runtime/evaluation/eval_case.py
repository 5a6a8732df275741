"""ADK's eval case, field for field (``google.adk.evaluation.eval_case``): a conversation of
invocations — what the user said, the tools the agent called, what it answered — and the
session it starts from.

Files written by ``adk`` load as they are: fields in snake_case (how ``adk`` writes them) or
camelCase (how ``adk web`` sends them), ``null`` for absent values, fields of newer ADK
releases (``rubrics``, ``final_session_state``, ``app_details`` …) kept on the case and
session input as ADK keeps them (``extra="allow"``) and ignored elsewhere. Written back,
names are snake_case: the form ``adk`` itself writes.
"""

from __future__ import annotations

from typing import Any

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel


class EvalBaseModel(BaseModel):
    """snake_case fields, read by name or by their camelCase alias."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        loc_by_alias=False,  # errors name fields as ADK's files spell them
    )


class IntermediateData(EvalBaseModel):
    """What the agent did on the way to its final response."""

    tool_uses: list[types.FunctionCall] = Field(default_factory=list)
    """Tool calls, in the order they were made."""

    tool_responses: list[types.FunctionResponse] = Field(default_factory=list)
    """Tool results, in the order they came back."""

    intermediate_responses: list[tuple[str, list[types.Part]]] = Field(default_factory=list)
    """Text said before the final response: ``(author, parts)``, e.g. by a sub-agent."""


class InvocationEvent(EvalBaseModel):
    """One event of an invocation, as newer ADK releases record it (``InvocationEvents``)."""

    model_config = ConfigDict(extra="ignore")

    author: str
    content: types.Content | None = None


class InvocationEvents(EvalBaseModel):
    """The other form ADK accepts for ``intermediate_data``: the invocation's events."""

    invocation_events: list[InvocationEvent] = Field(default_factory=list)


class Invocation(EvalBaseModel):
    """One turn: the user's message, and what the agent did and said in reply."""

    invocation_id: str = ""
    user_content: types.Content
    final_response: types.Content | None = None
    intermediate_data: IntermediateData | InvocationEvents | None = None
    creation_timestamp: float = 0.0

    @model_validator(mode="before")
    @classmethod
    def _intermediate_form(cls, data: Any) -> Any:
        # Both forms have only optional fields: choose by the key present, not by luck.
        if not isinstance(data, dict):
            return data
        for key in ("intermediate_data", "intermediateData"):
            found = data.get(key)
            if isinstance(found, dict) and (
                "invocation_events" in found or "invocationEvents" in found
            ):
                return {**data, key: InvocationEvents.model_validate(found)}
        return data

    def tool_calls(self) -> list[types.FunctionCall]:
        """Every tool call of the turn, in order, whichever form its data is in."""
        data = self.intermediate_data
        if isinstance(data, IntermediateData):
            return list(data.tool_uses)
        if isinstance(data, InvocationEvents):
            return [
                part.function_call
                for event in data.invocation_events
                for part in (event.content.parts or [] if event.content else [])
                if part.function_call is not None
            ]
        return []


class SessionInput(EvalBaseModel):
    """The session a case starts from: its app, user and initial state."""

    model_config = ConfigDict(extra="allow")

    app_name: str
    user_id: str
    state: dict[str, Any] = Field(default_factory=dict)


class EvalCase(EvalBaseModel):
    """One eval: a conversation (or, in newer ADK, a scenario for its user simulator — kept,
    but not run here) and the session it starts from."""

    model_config = ConfigDict(extra="allow")

    eval_id: str
    conversation: list[Invocation] | None = None
    conversation_scenario: dict[str, Any] | None = None
    session_input: SessionInput | None = None
    creation_timestamp: float = 0.0

    @model_validator(mode="after")
    def _conversation_xor_scenario(self) -> EvalCase:
        if (self.conversation is None) == (self.conversation_scenario is None):
            raise ValueError(
                "an eval case has exactly one of 'conversation' and 'conversation_scenario'"
            )
        return self
