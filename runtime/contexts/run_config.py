"""Per-run options."""

from __future__ import annotations

import enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class StreamingMode(enum.StrEnum):
    NONE = "none"
    SSE = "sse"


class RunConfig(BaseModel):
    """How one ``Runner.run_async`` call behaves.

    ``streaming_mode=SSE`` asks models to stream; text chunks come out as ``partial`` events.
    ``max_llm_calls`` bounds model calls per invocation (0 or less: unbounded).
    ``capture_content=False`` keeps message content off spans for this run (the
    ``gen_ai.content_capture`` switch does the same per session).
    """

    model_config = ConfigDict(extra="forbid")

    streaming_mode: StreamingMode = StreamingMode.NONE
    max_llm_calls: int = 500
    capture_content: bool = True
    custom_metadata: dict[str, Any] = Field(default_factory=dict)
