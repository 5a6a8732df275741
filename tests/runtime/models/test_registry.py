"""Model names to classes: a class registered before any name was resolved does not hide the
built-in ones, and wins over them for the names it serves."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import ClassVar

import pytest

from runtime.models import registry
from runtime.models.base_llm import BaseLlm
from runtime.models.gemini import Gemini
from runtime.models.llm_request import LlmRequest
from runtime.models.llm_response import LlmResponse
from runtime.models.offline_llm import OfflineLlm


class Mine(BaseLlm):
    model: str = "offline-mine"
    provider: ClassVar[str] = "mine"

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"offline-mine", r"custom-.*"]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        yield LlmResponse()


def test_a_class_registered_first_leaves_the_builtins_and_wins_its_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As in a fresh process: nothing registered, nothing resolved yet.
    monkeypatch.setattr(registry, "_registry", [])
    monkeypatch.setattr(registry, "_builtins_loaded", False)
    registry.register(Mine)
    assert type(registry.resolve("offline")) is OfflineLlm
    assert type(registry.resolve("offline-mine")) is Mine  # offline(-.*)? too: later wins
    assert type(registry.resolve("custom-1")) is Mine
    assert type(registry.resolve("gemini-2.5-flash")) is Gemini
