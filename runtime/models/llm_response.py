"""What a model sends back, one chunk or the whole answer."""

from __future__ import annotations

from typing import Any

from google.genai import types
from pydantic import BaseModel, ConfigDict


class LlmResponse(BaseModel):
    """A model's reply, or one streamed chunk of it (``partial=True``).

    A failed call is a response with ``error_code``/``error_message`` and no content.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    content: types.Content | None = None
    partial: bool | None = None
    turn_complete: bool | None = None
    finish_reason: types.FinishReason | None = None
    error_code: str | None = None
    error_message: str | None = None
    interrupted: bool | None = None
    usage_metadata: types.GenerateContentResponseUsageMetadata | None = None
    grounding_metadata: types.GroundingMetadata | None = None
    custom_metadata: dict[str, Any] | None = None
    model_version: str | None = None

    @staticmethod
    def create(response: types.GenerateContentResponse) -> LlmResponse:
        """Build from a google-genai response: its first candidate, or the block reason."""
        usage = response.usage_metadata
        if response.candidates:
            candidate = response.candidates[0]
            if candidate.content and candidate.content.parts:
                return LlmResponse(
                    content=candidate.content,
                    finish_reason=candidate.finish_reason,
                    usage_metadata=usage,
                    grounding_metadata=candidate.grounding_metadata,
                    model_version=response.model_version,
                )
            return LlmResponse(
                error_code=str(candidate.finish_reason.value if candidate.finish_reason else ""),
                error_message=candidate.finish_message or "the model returned no content",
                finish_reason=candidate.finish_reason,
                usage_metadata=usage,
                model_version=response.model_version,
            )
        feedback = response.prompt_feedback
        if feedback is not None and feedback.block_reason is not None:
            return LlmResponse(
                error_code=str(feedback.block_reason.value),
                error_message=feedback.block_reason_message or "the prompt was blocked",
                usage_metadata=usage,
            )
        return LlmResponse(
            error_code="UNKNOWN_ERROR",
            error_message="the model returned neither candidates nor a block reason",
            usage_metadata=usage,
        )

    @property
    def text(self) -> str:
        if not self.content or not self.content.parts:
            return ""
        return "".join(p.text for p in self.content.parts if p.text and not p.thought)
