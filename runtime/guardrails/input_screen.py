"""The input screen: a ``before_model`` guardrail answering blocked requests itself."""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from runtime.callbacks.naming import Hook
from runtime.contexts.callback_context import CallbackContext
from runtime.guardrails.policy import Guardrail
from runtime.models.llm_request import LlmRequest, latest_user_text
from runtime.models.llm_response import LlmResponse
from runtime.telemetry.attributes import Decision

__all__ = ["InputScreen", "InputScreenConfig"]

Term = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]


class InputScreenConfig(BaseModel):
    """``blocked_terms`` match as whole words, ``blocked_patterns`` are regular expressions
    searched anywhere; both ignore case unless ``case_sensitive``. ``reply`` is what the
    agent answers instead of calling its model."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    blocked_terms: list[Term] = Field(default_factory=list, max_length=500)
    blocked_patterns: list[str] = Field(default_factory=list, max_length=100)
    reply: str = Field(default="I can't help with that request.", min_length=1, max_length=2000)
    case_sensitive: bool = False

    @field_validator("blocked_patterns")
    @classmethod
    def _compile(cls, patterns: list[str]) -> list[str]:
        for i, pattern in enumerate(patterns):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"pattern {i} ({pattern!r}) is not valid: {exc}") from exc
        return patterns

    def first_match(self, text: str) -> str | None:
        """Why ``text`` is blocked (which term or pattern), or ``None``."""
        flags = 0 if self.case_sensitive else re.IGNORECASE
        for term in self.blocked_terms:
            if re.search(rf"(?<!\w){re.escape(term)}(?!\w)", text, flags):
                return f"blocked term {term!r}"
        for pattern in self.blocked_patterns:
            if re.search(pattern, text, flags):
                return f"blocked pattern {pattern!r}"
        return None


class InputScreen(Guardrail[InputScreenConfig]):
    """Screens the user's latest message before each model call; a match → the policy's
    ``reply`` as the agent's answer, the model not called.

    ``Agent(..., before_model_callback=InputScreen(policy).before_model)``
    """

    kind = "input_screen"
    summary = (
        "Messages an agent refuses before its model sees them: blocked terms and patterns, and "
        "the reply instead."
    )
    example: ClassVar[dict[str, Any]] = {
        "blocked_terms": ["password"],
        "blocked_patterns": [],
        "reply": "I can't.",
    }
    Config = InputScreenConfig

    def __init__(self, policy: Any = None, **kwargs: Any) -> None:
        super().__init__(policy, **kwargs)
        self.before_model = Hook(self.name, self._before_model)

    async def _before_model(
        self, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        read = await self.read(callback_context)
        if read is None:
            return _reply("I can't answer right now: my input rules could not be read.")
        config, view = read
        if config is None:
            self.record(Decision.ALLOWED, "no input policy governs this agent", None)
            return None
        found = None
        for text in _user_texts(callback_context, llm_request):
            found = found or config.first_match(text)
        if found is None:
            self.record(Decision.ALLOWED, "no blocked term or pattern matched", view)
            return None
        self.record(Decision.BLOCKED, f"the message matched {found}", view)
        return _reply(config.reply)


def _user_texts(ctx: CallbackContext, request: LlmRequest) -> list[str]:
    """What the user said: the invocation's message and the request's latest user turn
    (the same text, unless a callback rewrote the request)."""
    texts = [latest_user_text(request)]
    content = ctx.user_content
    if content is not None:
        texts.append("".join(p.text for p in content.parts or [] if p.text and not p.thought))
    return [t for t in dict.fromkeys(texts) if t]


def _reply(text: str) -> LlmResponse:
    return LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text=text)]),
        finish_reason=types.FinishReason.STOP,
    )
