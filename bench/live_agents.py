"""Agents for bench/live.py, loaded by the server (``AGENTDASH_AGENTS``, with the
repository on ``PYTHONPATH``).

``burst_agent``: a model of its own (no network, no script to run out) that first asks for
``BURST_CALLS`` calls of a trivial tool in one turn, then answers. Each call is a tool span
plus its callback spans, all produced as fast as the runtime can: a span-throughput load.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator
from typing import ClassVar

from google.genai import types

from runtime import Agent
from runtime.models.base_llm import BaseLlm
from runtime.models.llm_request import LlmRequest
from runtime.models.llm_response import LlmResponse

BURST_CALLS = int(os.environ.get("AGENTDASH_BENCH_BURST_CALLS", "200"))


class BurstLlm(BaseLlm):
    """Many tool calls in the first turn; a short text once the tool results are in."""

    model: str = "burst"
    provider: ClassVar[str] = "bench"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1] if llm_request.contents else None
        answered = last is not None and any(p.function_response for p in last.parts or [])
        if answered:
            parts = [types.Part(text=f"Done: {BURST_CALLS} calls.")]
        else:
            parts = [
                types.Part(function_call=types.FunctionCall(name="tick", args={"n": i}))
                for i in range(BURST_CALLS)
            ]
        yield LlmResponse(content=types.Content(role="model", parts=parts))


def tick(n: int) -> dict[str, int]:
    """Returns ``n``.

    Args:
      n: any number.
    """
    return {"n": n}


root_agent = Agent(
    name="burst_agent",
    model=BurstLlm(),
    description="Calls a trivial tool many times in one turn (benchmark load).",
    instruction="Call tick.",
    tools=[tick],
)
