"""What a model sends back, one chunk or the whole answer."""

from __future__ import annotations

from typing import Any

from google.genai import types
from pydantic import BaseModel, ConfigDict

SAFETY_BLOCKS = frozenset(
    {
        "SAFETY",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "RECITATION",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
    }
)
"""Finish and block reasons meaning the provider's own safety filters withheld the answer."""


def _blocked_ratings(ratings: list[types.SafetyRating] | None) -> str:
    """The categories that blocked an answer, e.g. ``HARM_CATEGORY_HARASSMENT (HIGH)``."""
    out = []
    for rating in ratings or []:
        if rating.blocked and rating.category is not None:
            level = f" ({rating.probability.value})" if rating.probability else ""
            out.append(f"{rating.category.value}{level}")
    return ", ".join(out)


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
            code = str(candidate.finish_reason.value if candidate.finish_reason else "")
            message = candidate.finish_message or "the model returned no content"
            blocked = _blocked_ratings(candidate.safety_ratings)
            if code in SAFETY_BLOCKS:
                message = (
                    candidate.finish_message or "the model's safety filters blocked the answer"
                )
                if blocked:
                    message += f": {blocked}"
            return LlmResponse(
                error_code=code,
                error_message=message,
                finish_reason=candidate.finish_reason,
                usage_metadata=usage,
                model_version=response.model_version,
            )
        feedback = response.prompt_feedback
        if feedback is not None and feedback.block_reason is not None:
            return LlmResponse(
                error_code=str(feedback.block_reason.value),
                error_message=feedback.block_reason_message
                or "the prompt was blocked"
                + (
                    f": {_blocked_ratings(feedback.safety_ratings)}"
                    if feedback.safety_ratings
                    else ""
                ),
                usage_metadata=usage,
            )
        return LlmResponse(
            error_code="UNKNOWN_ERROR",
            error_message="the model returned neither candidates nor a block reason",
            usage_metadata=usage,
        )

    @property
    def safety_blocked(self) -> bool:
        """Whether the provider's safety filters withheld this answer (or the prompt)."""
        reason = self.finish_reason.value if self.finish_reason is not None else ""
        return reason in SAFETY_BLOCKS or (self.error_code or "") in SAFETY_BLOCKS

    @property
    def text(self) -> str:
        if not self.content or not self.content.parts:
            return ""
        return "".join(p.text for p in self.content.parts if p.text and not p.thought)
