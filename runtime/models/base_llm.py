"""The model interface: subclass it as you would ADK's ``BaseLlm``."""

from __future__ import annotations

import abc
from collections.abc import AsyncGenerator
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from runtime.models.llm_request import LlmRequest
from runtime.models.llm_response import LlmResponse


class BaseLlm(BaseModel, abc.ABC):
    """A model the agents can call.

    Subclasses set ``model`` (the name shown in spans) and implement
    :meth:`generate_content_async`, yielding one complete :class:`LlmResponse` when
    ``stream`` is false, or partial chunks followed by a final aggregate when it is true.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model: str
    provider: ClassVar[str] = "custom"

    @classmethod
    def supported_models(cls) -> list[str]:
        """Regular expressions of model names this class serves (see ``models.registry``)."""
        return []

    @abc.abstractmethod
    def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """Call the model. Implemented as ``async def ...: yield ...``."""
