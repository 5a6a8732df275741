"""A model that replays a script: the model of the unit tests."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any, ClassVar

from google.genai import types
from pydantic import Field, PrivateAttr

from runtime.errors import ScriptExhaustedError
from runtime.models.base_llm import BaseLlm
from runtime.models.llm_request import LlmRequest
from runtime.models.llm_response import LlmResponse

ScriptItem = (
    Any  # LlmResponse | types.Content | str | types.FunctionCall | BaseException | callable
)


def to_response(item: ScriptItem) -> LlmResponse:
    """Turn one script item into the response it stands for; exceptions are raised."""
    if isinstance(item, BaseException):
        raise item
    if isinstance(item, type) and issubclass(item, BaseException):
        raise item()
    if isinstance(item, LlmResponse):
        return item.model_copy()
    if isinstance(item, types.Content):
        return LlmResponse(content=item, finish_reason=types.FinishReason.STOP)
    if isinstance(item, str):
        return LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=item)]),
            finish_reason=types.FinishReason.STOP,
        )
    if isinstance(item, types.FunctionCall):
        return LlmResponse(
            content=types.Content(role="model", parts=[types.Part(function_call=item)]),
            finish_reason=types.FinishReason.STOP,
        )
    raise TypeError(
        "a ScriptedLlm item must be an LlmResponse, types.Content, str, types.FunctionCall, "
        f"an exception or a callable taking the LlmRequest; got {type(item).__name__}"
    )


class ScriptedLlm(BaseLlm):
    """Replays ``responses`` in order, one per model call.

    Each item is an :class:`LlmResponse`, a ``types.Content``, a ``str`` (model text), a
    ``types.FunctionCall``, an exception (raised by the call), or a callable that gets the
    :class:`LlmRequest` and returns one of those. Running out raises
    :class:`~runtime.errors.ScriptExhaustedError`. Every request is kept in ``requests``.
    With ``stream=True`` text is yielded word by word as partial chunks, then whole.
    """

    model: str = "scripted"
    provider: ClassVar[str] = "scripted"
    responses: list[Any] = Field(default_factory=list)
    _cursor: int = PrivateAttr(default=0)
    _requests: list[LlmRequest] = PrivateAttr(default_factory=list)

    @property
    def requests(self) -> list[LlmRequest]:
        return self._requests

    @property
    def remaining(self) -> int:
        return len(self.responses) - self._cursor

    def _next(self, llm_request: LlmRequest) -> LlmResponse:
        # A cheap snapshot: later turns append new contents rather than edit old ones.
        self._requests.append(
            LlmRequest.model_construct(
                model=llm_request.model,
                contents=list(llm_request.contents),
                config=llm_request.config.model_copy(),
                tools_dict=dict(llm_request.tools_dict),
            )
        )
        if self._cursor >= len(self.responses):
            raise ScriptExhaustedError(
                f"ScriptedLlm {self.model!r} has no response left: the script had "
                f"{len(self.responses)} and call {self._cursor + 1} asked for another"
            )
        item = self.responses[self._cursor]
        self._cursor += 1
        if callable(item) and not isinstance(item, type | BaseException):
            item = _call(item, llm_request)
        return to_response(item)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        response = self._next(llm_request)
        if stream and response.text and response.content is not None:
            words = response.text.split(" ")
            for i, word in enumerate(words):
                chunk = word if i == len(words) - 1 else word + " "
                yield LlmResponse(
                    content=types.Content(role="model", parts=[types.Part(text=chunk)]),
                    partial=True,
                )
        yield response


def _call(fn: Callable[[LlmRequest], Any], request: LlmRequest) -> Any:
    return fn(request)
