"""Sending a call from the playground: the edited payload checked
(:func:`playground_check`), sent to the model it names — the runtime's registry: ``offline``,
Gemini with a key, any registered class — on the caller's loop (:func:`playground_send`),
and its answer, tokens, cost and latency kept as the playground's own run
(:func:`playground_record`) — never an event or a span of the session; a streamed call is
kept even when its page closes mid-answer (:func:`playground_stream_kept`). Operators only;
every call audited."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError

from agentdash.agent_sessions.models import AgentSession
from agentdash.core.hygiene import value_problem
from agentdash.core.permissions import is_operator
from agentdash.core.services import audit_record
from agentdash.core.threads import in_worker_thread
from agentdash.playground.models import PlaygroundRun
from agentdash.spans.totals import price_book
from agentdash.spans.usage import cost_of
from runtime.models import registry
from runtime.models.call_payload import PARAMETERS, CallPayload, request_of
from runtime.models.llm_response import LlmResponse
from runtime.telemetry.payloads import contents_to_messages

logger = logging.getLogger(__name__)

CALL_TIMEOUT_S = 120.0
TEXT_MAX_CHARS = 200_000


def payload_check(payload: CallPayload) -> None:
    """``ValidationError`` naming the part of the payload that cannot be sent."""
    if not payload.model.strip() or len(payload.model) > 128:
        raise ValidationError({"model": ["a model name, such as offline or gemini-2.5-flash"]})
    if len(payload.system) > TEXT_MAX_CHARS:
        raise ValidationError({"system": [f"at most {TEXT_MAX_CHARS:,} characters"]})
    if not any(m.get("role") not in ("assistant", "model") for m in payload.messages):
        raise ValidationError({"messages": ["the call needs a message from the user"]})
    for name, value in payload.parameters.items():
        if name not in PARAMETERS:
            raise ValidationError({"parameters": [f"no parameter {name!r}"]})
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise ValidationError({"parameters": [f"{name} is a number"]})
    problem = value_problem({"system": payload.system, "messages": payload.messages,
                             "tools": payload.tools})  # fmt: skip
    if problem:
        raise ValidationError({"messages": [problem]})
    try:
        registry.resolve(payload.model)
    except Exception as exc:  # the registry says which names it knows
        raise ValidationError({"model": [str(exc)[:300]]}) from None


async def _call(payload: CallPayload) -> tuple[LlmResponse | None, float]:
    llm = registry.resolve(payload.model)
    request = request_of(payload)
    started = time.perf_counter()
    last: LlmResponse | None = None
    async with asyncio.timeout(CALL_TIMEOUT_S):
        async for response in llm.generate_content_async(request, stream=False):
            last = response
    return last, (time.perf_counter() - started) * 1000


@dataclass(frozen=True)
class Sent:
    """What the model did with a call: its last response and how long it took, or why there
    is none (``error``)."""

    response: LlmResponse | None
    latency_ms: float | None
    error: str = ""


def playground_check(*, payload: CallPayload, actor: Any) -> None:
    """``PermissionDenied`` for anyone but an operator; ``ValidationError`` for a payload
    that cannot be sent (:func:`payload_check`)."""
    if not is_operator(actor):
        raise PermissionDenied("only operators use the playground")
    payload_check(payload)


async def playground_send(payload: CallPayload) -> Sent:
    """Send a checked payload on the running loop; the model's failure or silence (at most
    :data:`CALL_TIMEOUT_S`) is the outcome, never raised. Async: a call may take a minute,
    and a serving thread must not wait for it."""
    try:
        response, latency = await _call(payload)
    except Exception as exc:  # the model's own failure is the run's outcome
        return _failed(exc)
    return Sent(response, round(latency, 1))


async def playground_stream(payload: CallPayload) -> AsyncIterator[str | Sent]:
    """Send a checked payload asking the model to stream: the text of each piece as it
    comes, then the outcome (a :class:`Sent`, last), as :func:`playground_send` has it."""
    llm = registry.resolve(payload.model)
    started = time.perf_counter()
    last: LlmResponse | None = None
    try:
        async with asyncio.timeout(CALL_TIMEOUT_S):
            async for response in llm.generate_content_async(request_of(payload), stream=True):
                if not response.partial:
                    last = response
                elif text := _text(response):
                    yield text
    except Exception as exc:  # the model's own failure, or its silence, is the outcome
        yield _failed(exc)
        return
    yield Sent(last, round((time.perf_counter() - started) * 1000, 1))


# The streamed calls under way, each to its end whoever still reads it (a task the loop
# only holds weakly would be collected mid-call).
_UNDER_WAY: set[asyncio.Task[None]] = set()


async def playground_stream_kept(
    *, session: AgentSession, trace_id: str, span_id: str, payload: CallPayload, actor: Any
) -> AsyncIterator[str | PlaygroundRun]:
    """:func:`playground_stream` with its run kept (:func:`playground_record`): the text of
    each piece as it comes, then the run. The call goes on to its end and is kept even when
    the reader stops (a page closed mid-answer: the model has been asked, its tokens spent)."""
    said: asyncio.Queue[str | PlaygroundRun | Exception] = asyncio.Queue()

    async def call() -> None:
        try:
            sent = None
            async for piece in playground_stream(payload):
                if isinstance(piece, str):
                    said.put_nowait(piece)
                else:
                    sent = piece
            assert sent is not None  # the stream ends with its outcome
            record = in_worker_thread(playground_record)
            said.put_nowait(await record(session=session, trace_id=trace_id, span_id=span_id,
                                         payload=payload, sent=sent, actor=actor))  # fmt: skip
        except Exception as exc:  # the database, say: the reader is told, if still there
            logger.exception("a playground call of session %s could not be kept", session.pk)
            said.put_nowait(exc)

    task = asyncio.get_running_loop().create_task(call())
    _UNDER_WAY.add(task)
    task.add_done_callback(_UNDER_WAY.discard)
    while True:
        item = await said.get()
        if isinstance(item, Exception):
            raise item
        yield item
        if isinstance(item, PlaygroundRun):
            return


def _failed(exc: Exception) -> Sent:
    if isinstance(exc, TimeoutError):
        return Sent(None, None, f"the model did not answer in {CALL_TIMEOUT_S:.0f} s")
    return Sent(None, None, f"{type(exc).__name__}: {exc}"[:2000])


def _text(response: LlmResponse) -> str:
    parts = response.content.parts if response.content is not None else None
    return "".join(p.text or "" for p in parts or [] if not p.thought)


def playground_record(
    *, session: AgentSession, trace_id: str, span_id: str, payload: CallPayload, sent: Sent,
    actor: Any,
) -> PlaygroundRun:  # fmt: skip
    """Keep what was sent and what came back as the playground's run; audited
    ``playground.call``."""
    row = PlaygroundRun(session=session, trace_id=trace_id, span_id=span_id, author=actor,
                        author_name=actor.get_username(), model=payload.model,
                        request=_request_data(payload), error=sent.error,
                        latency_ms=sent.latency_ms)  # fmt: skip
    if not sent.error:
        _put_answer(row, sent.response)
    row.save()
    said = {"session": session.pk, "span": span_id, "model": row.model, "error": row.error[:200]}
    audit_record(actor=actor, action="playground.call", target_type="playground.run",
                 target_id=str(row.pk), after=said)  # fmt: skip
    return row


def _request_data(payload: CallPayload) -> dict[str, Any]:
    return {"model": payload.model, "system": payload.system, "messages": payload.messages,
            "tools": payload.tools, "parameters": payload.parameters}  # fmt: skip


def _put_answer(row: PlaygroundRun, response: LlmResponse | None) -> None:
    if response is None:
        row.error = "the model answered nothing"
        return
    if response.error_code or response.error_message:
        row.error = f"{response.error_code or 'error'}: {response.error_message or ''}"[:2000]
    if response.content is not None:
        row.answer = contents_to_messages([response.content])
        row.text = _text(response)
    usage = response.usage_metadata
    if usage is not None:
        row.input_tokens = usage.prompt_token_count
        row.output_tokens = usage.candidates_token_count
        price = price_book().price_of(row.model)
        if price is not None and row.input_tokens is not None:
            row.cost_usd = float(cost_of(price, tokens_in=row.input_tokens,
                                         tokens_out=row.output_tokens or 0,
                                         cached=usage.cached_content_token_count or 0,
                                         thinking=usage.thoughts_token_count or 0))  # fmt: skip
