"""Gemini through ``google-genai``'s async client, with retries of our own.

google-genai retries nothing unless asked, so this class retries 429/500/502/503/504 and
timeouts/connection errors with exponential backoff and full jitter, honours the server's
``Retry-After`` header (or the ``RetryInfo`` detail of a Google error body), and records every
retry as a ``gen_ai.retry`` event on the current OpenTelemetry span.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import random
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, ClassVar

from google import genai
from google.genai import errors as genai_errors
from google.genai import types
from opentelemetry import trace
from pydantic import PrivateAttr

from runtime.errors import ModelCallError
from runtime.models.base_llm import BaseLlm
from runtime.models.llm_request import LlmRequest
from runtime.models.llm_response import LlmResponse

RETRYABLE_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_SERVER_DELAY_S = 60.0  # a Retry-After longer than this is shortened to it


def _transport_errors() -> tuple[type[BaseException], ...]:
    """Timeouts and connection failures as google-genai surfaces them (httpx2 or httpx)."""
    found: list[type[BaseException]] = [TimeoutError, ConnectionError]
    for name in ("httpx2", "httpx"):
        with contextlib.suppress(ImportError, AttributeError):
            found.append(importlib.import_module(name).TransportError)
    return tuple(found)


_TRANSPORT_ERRORS = _transport_errors()
_CALL_ERRORS = (genai_errors.APIError, genai_errors.UnknownApiResponseError, *_TRANSPORT_ERRORS)


def _server_delay(err: BaseException) -> float | None:
    """Seconds the server asked us to wait: ``Retry-After`` header, else a ``RetryInfo``."""
    headers = getattr(getattr(err, "response", None), "headers", None)
    if headers is not None:
        for name, value in headers.items():
            if name.lower() == "retry-after":
                try:
                    return max(0.0, float(value))
                except ValueError:
                    break  # an HTTP date: fall back to our own backoff
    details = getattr(err, "details", None)
    error = details.get("error", {}) if isinstance(details, dict) else {}
    for detail in error.get("details", []) if isinstance(error, dict) else []:
        delay = detail.get("retryDelay") if isinstance(detail, dict) else None
        if isinstance(delay, str) and delay.endswith("s"):
            try:
                return max(0.0, float(delay[:-1]))
            except ValueError:
                return None
    return None


class _ClientSlot:
    """Where a :class:`Gemini` keeps its google-genai client once made.

    It copies and pickles empty, as ADK's client cache does: a client holds this process's
    locks, sockets and SSL contexts, so a copied or unpickled model makes its own on first
    use, and a model stays copyable after it has been called (say, inside the ``AgentTool``
    of an ``LlmRequest``'s ``tools_dict``). Any two slots compare equal: which client a
    model has made is no part of its value, and models compare by their fields (ADK's too).
    """

    __slots__ = ("client",)

    def __init__(self) -> None:
        self.client: genai.Client | None = None

    def __reduce__(self) -> tuple[type[_ClientSlot], tuple[()]]:
        return (_ClientSlot, ())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _ClientSlot)

    def __hash__(self) -> int:
        return hash(_ClientSlot)


class Gemini(BaseLlm):
    """Google's Gemini models (``GOOGLE_API_KEY`` or ``GEMINI_API_KEY``).

    ``base_url`` (or ``GOOGLE_GEMINI_BASE_URL``) points it at any Gemini-API-compatible
    endpoint; ``api_version`` picks ``v1`` (google-genai's default) or ``v1beta``.
    """

    model: str = "gemini-2.5-flash"
    provider: ClassVar[str] = "gemini"

    api_key: str | None = None
    base_url: str | None = None
    api_version: str | None = None
    timeout_s: float = 60
    max_attempts: int = 5
    initial_backoff_s: float = 0.5
    max_backoff_s: float = 16

    _client: _ClientSlot = PrivateAttr(default_factory=_ClientSlot)

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"gemini-.*", r"models/gemini-.*"]

    @property
    def api_client(self) -> genai.Client:
        """The google-genai client, made on first use (so a missing key fails the call)."""
        if self._client.client is None:
            key = (
                self.api_key or os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY")
            )
            if not key:
                raise ModelCallError(
                    "Gemini needs an API key: set the GOOGLE_API_KEY or GEMINI_API_KEY "
                    "environment variable, or pass Gemini(api_key=...)",
                    attempts=0,
                )
            options = types.HttpOptions(
                base_url=self.base_url or os.environ.get("GOOGLE_GEMINI_BASE_URL") or None,
                api_version=self.api_version,
                timeout=round(self.timeout_s * 1000),
            )
            self._client.client = genai.Client(vertexai=False, api_key=key, http_options=options)
        return self._client.client

    async def aclose(self) -> None:
        """Close the client's connections (a later call opens new ones)."""
        client, self._client.client = self._client.client, None
        if client is not None:
            await client.aio.aclose()

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        models = self.api_client.aio.models
        model = llm_request.model or self.model
        contents: Any = llm_request.contents
        config = llm_request.config
        attempt = 1
        if not stream:
            while True:
                try:
                    response = await models.generate_content(
                        model=model, contents=contents, config=config
                    )
                    break
                except Exception as err:
                    await self._before_retry(err, attempt, model)
                    attempt += 1
            yield LlmResponse.create(response)
            return

        iterator: AsyncIterator[types.GenerateContentResponse] | None = None
        merged = _StreamMerger()
        try:
            while True:
                try:
                    if iterator is None:
                        iterator = aiter(
                            await models.generate_content_stream(
                                model=model, contents=contents, config=config
                            )
                        )
                    chunk = await anext(iterator)
                except StopAsyncIteration:
                    break
                except Exception as err:
                    if merged.yielded:  # the caller has seen text: a retry would repeat it
                        raise self._failure(err, attempt, model, "mid-stream") from err
                    await _close(iterator)
                    await self._before_retry(err, attempt, model)
                    attempt, iterator, merged = attempt + 1, None, _StreamMerger()
                    continue
                partial = merged.add(chunk)
                if partial is not None:
                    yield partial
        finally:
            await _close(iterator)
        yield merged.final()

    async def _before_retry(self, err: Exception, attempt: int, model: str) -> None:
        """Sleep before the next attempt, or raise :class:`ModelCallError` if there is none."""
        status = err.code if isinstance(err, genai_errors.APIError) else None
        if not isinstance(err, _CALL_ERRORS):
            raise err  # not a failed call but a bug or a bad request object: keep it visible
        retryable = status in RETRYABLE_STATUSES or isinstance(err, _TRANSPORT_ERRORS)
        if not retryable or attempt >= self.max_attempts:
            raise self._failure(err, attempt, model) from err
        hint = _server_delay(err)
        if hint is not None:
            delay = min(hint, MAX_SERVER_DELAY_S)
        else:
            ceiling = min(self.max_backoff_s, self.initial_backoff_s * 2 ** (attempt - 1))
            delay = random.uniform(0, ceiling)
        event: dict[str, Any] = {
            "attempt": attempt,
            "delay_s": delay,
            "error.type": type(err).__name__,
            "gen_ai.request.model": model,
        }
        if status is not None:
            event["status"] = status
        trace.get_current_span().add_event("gen_ai.retry", event)
        await asyncio.sleep(delay)

    def _failure(self, err: Exception, attempts: int, model: str, when: str = "") -> ModelCallError:
        status = err.code if isinstance(err, genai_errors.APIError) else None
        what = f"HTTP {status}" if status is not None else type(err).__name__
        detail = getattr(err, "message", None) or str(err)
        if not detail:
            timeout = "Timeout" in type(err).__name__ or isinstance(err, TimeoutError)
            detail = f"no answer within {self.timeout_s:g}s" if timeout else "no detail"
        where = f" {when}" if when else ""
        return ModelCallError(
            f"Gemini call to {model!r} failed{where} with {what} after {attempts} "
            f"attempt{'s' if attempts != 1 else ''}: {detail}",
            status=status,
            attempts=attempts,
        )


async def _close(iterator: AsyncIterator[Any] | None) -> None:
    aclose = getattr(iterator, "aclose", None)
    if aclose is not None:
        with contextlib.suppress(Exception):  # a failed stream's close error says nothing new
            await aclose()


class _StreamMerger:
    """Turns streamed chunks into partial responses and one final aggregate."""

    def __init__(self) -> None:
        self.parts: list[types.Part] = []
        self.last: types.GenerateContentResponse | None = None
        self.finish: types.FinishReason | None = None
        self.usage: types.GenerateContentResponseUsageMetadata | None = None
        self.yielded = False

    def add(self, chunk: types.GenerateContentResponse) -> LlmResponse | None:
        """Keep ``chunk``; return a partial response with its text, if it has any."""
        self.last = chunk
        self.usage = chunk.usage_metadata or self.usage
        candidate = chunk.candidates[0] if chunk.candidates else None
        if candidate is None:
            return None
        self.finish = candidate.finish_reason or self.finish
        texts: list[types.Part] = []
        for part in (candidate.content.parts if candidate.content else None) or []:
            is_text = part.text is not None and part.function_call is None
            prev = self.parts[-1] if self.parts else types.Part()
            if is_text and prev.text is not None and prev.thought == part.thought:
                prev.text += part.text or ""
                prev.thought_signature = prev.thought_signature or part.thought_signature
            else:
                self.parts.append(part.model_copy(deep=True))
            if is_text and part.text:
                texts.append(part)
        if not texts:
            return None
        self.yielded = True
        return LlmResponse(
            content=types.Content(role="model", parts=texts),
            partial=True,
            model_version=chunk.model_version,
        )

    def final(self) -> LlmResponse:
        """Everything streamed as one non-partial response (usage from the last chunk)."""
        last = self.last or types.GenerateContentResponse()
        first = last.candidates[0] if last.candidates else None
        candidate = types.Candidate(
            content=types.Content(role="model", parts=self.parts) if self.parts else None,
            finish_reason=self.finish,
            finish_message=first.finish_message if first else None,
        )
        update = {"candidates": [candidate] if self.parts or first else None}
        return LlmResponse.create(last.model_copy(update={**update, "usage_metadata": self.usage}))
