"""A model response's token counts as span attributes, in the OTel GenAI conventions' terms."""

from __future__ import annotations

from google.genai import types

from runtime.telemetry.attributes import GenAI


def usage_attributes(usage: types.GenerateContentResponseUsageMetadata | None) -> dict[str, int]:
    """The ``gen_ai.usage.*`` attributes of a response's usage metadata (``{}`` for none).

    The conventions count cached tokens inside the input tokens and reasoning tokens inside
    the output tokens; Gemini does the first (``prompt_token_count`` includes
    ``cached_content_token_count``) but reports thinking apart from the answer
    (``thoughts_token_count`` is not in ``candidates_token_count``). So:

    - ``input_tokens`` = prompt + tool-use prompt tokens;
    - ``output_tokens`` = candidates + thoughts tokens;
    - ``cache_read.input_tokens`` = cached content tokens, ``reasoning.output_tokens`` =
      thoughts tokens — each only when the model reported it.

    A count the model did not report is left out, never written as 0."""
    if usage is None:
        return {}
    found: dict[str, int] = {}
    prompt = _total(usage.prompt_token_count, usage.tool_use_prompt_token_count)
    if prompt is not None:
        found[GenAI.USAGE_INPUT_TOKENS] = prompt
    output = _total(usage.candidates_token_count, usage.thoughts_token_count)
    if output is not None:
        found[GenAI.USAGE_OUTPUT_TOKENS] = output
    if usage.cached_content_token_count is not None:
        found[GenAI.USAGE_CACHE_READ_INPUT_TOKENS] = usage.cached_content_token_count
    if usage.thoughts_token_count is not None:
        found[GenAI.USAGE_REASONING_OUTPUT_TOKENS] = usage.thoughts_token_count
    return found


def _total(*counts: int | None) -> int | None:
    reported = [count for count in counts if count is not None]
    return sum(reported) if reported else None
