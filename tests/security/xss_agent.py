"""``xss_probe``: an agent that puts the hostile corpus into everything an agent can reach,
for the browser tests (tests/agentdash/dashboard/browser/test_xss_corpus.py). Load it with
``AGENTDASH_AGENTS=...,tests.security.xss_agent:root_agent``.

Its model is the scripted model (``ScriptedLlm``, every response computed from the
request, its text streamed in a few pieces). A run is asked for with a line
``xss ids: <id> <id> …`` (vector ids of tests/security/xss_corpus.json). For each vector,
in order, the model answers the vector as its text (streamed as partial text, then stored
as an event: Markdown through the sanitizer) together with a call of ``echo_vector`` whose
arguments carry the vector (as a value and as a key); the tool returns it (as a value and
as a key) and writes it into the session state (as a key and as a value); callbacks named
by hostile strings write it into the session state and the current span's attributes (as a
key and as a value). Before the vectors the model calls a tool that does not exist, by a
hostile name (the runtime answers with an error naming it); after them it answers with an
image-only Markdown line and stops. The agent's description and instruction are hostile.

Tool names cannot be hostile (letters, digits, ``_``, ``-``: the runtime refuses others), nor
agent names (Python identifiers).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from google.genai import types

from runtime import (
    Callback,
    Context,
    FunctionTool,
    LlmAgent,
    ToolContext,
    get_default_callbacks,
    named,
)
from runtime.models.llm_request import LlmRequest
from runtime.models.llm_response import LlmResponse
from runtime.models.scripted_llm import ScriptedLlm
from tests.security.corpus import Vector, by_id

AGENT_NAME = "xss_probe"
ASK = "xss ids:"
GHOST_TOOL = '<img src=x onerror=xss("ghost-tool")>"><script>xss("ghost-tool")</script>'
FINAL_TEXT = "Done. ![a chart of the results](https://evil.example/chart.png)"
CHUNKS = 8  # streamed pieces of a text at most
KEY_CHARS = 80  # a vector as a key: its start
STATE_CHARS = 20_000  # a vector in the state: its start (a session's state stays small)
# Callback names as hostile as the names people see get (a name is what operators switch).
MODEL_CALLBACK_NAME = '<svg onload=xss("callback-name")>{{ 7*7 }}'
SPAN_WRITER_NAME = '"><img src=x onerror=xss("any-agent-name")>javascript:xss(1)'
DESCRIPTION = (
    'Puts hostile strings everywhere <img src=x onerror=xss("description")> '
    "[docs](javascript:xss(1)) {{ request.user }} ${xss(2)}"
)
INSTRUCTION = (
    'Echo every vector. <script>xss("instruction")</script> '
    "[click](javascript:xss(3)) \u202etxt.exe"
)


class ChunkedScriptedLlm(ScriptedLlm):
    """The scripted model, streaming its text in at most :data:`CHUNKS` pieces (the base
    class streams word by word: hundreds of thousands of partial events for a megabyte of
    words, which is the test's cost, not the page's)."""

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        response = self._next(llm_request)
        text = response.text or ""
        if stream and text:
            size = max(1, -(-len(text) // CHUNKS))
            for at in range(0, len(text), size):
                part = types.Part(text=text[at : at + size])
                yield LlmResponse(content=types.Content(role="model", parts=[part]), partial=True)
        yield response


def _asked(request: LlmRequest) -> tuple[list[Vector], int]:
    """The vectors the last user message asks for, and how many tool results came since."""
    done = 0
    for content in reversed(request.contents):
        for part in content.parts or []:
            if part.function_response is not None:
                done += 1
            if content.role == "user" and part.text and ASK in part.text:
                line = next(line for line in part.text.splitlines() if line.startswith(ASK))
                ids = line.removeprefix(ASK).split()
                return [by_id(vector_id) for vector_id in ids], done
    return [], done


def _respond(request: LlmRequest) -> Any:
    vectors, done = _asked(request)
    if done == 0:
        call = types.FunctionCall(name=GHOST_TOOL, args={"why": "a tool that does not exist"})
        return types.Content(role="model", parts=[types.Part(function_call=call)])
    if done - 1 < len(vectors):
        vector = vectors[done - 1]
        args = {"vector_id": vector.id, "text": vector.text, vector.text[:KEY_CHARS]: vector.kind}
        call = types.FunctionCall(name="echo_vector", args=args)
        return types.Content(
            role="model", parts=[types.Part(text=vector.text), types.Part(function_call=call)]
        )
    return FINAL_TEXT


def echo_vector(vector_id: str, text: str, tool_context: ToolContext) -> dict[str, Any]:
    """Returns the vector it is given, and keeps it in the session state."""
    tool_context.state[f"{vector_id}:{text[:KEY_CHARS]}"] = text[:STATE_CHARS]
    return {"vector": text, text[:KEY_CHARS] or "(empty)": vector_id}


def _current(llm_request: LlmRequest | None) -> Vector | None:
    if llm_request is None:
        return None
    vectors, done = _asked(llm_request)
    return vectors[done - 1] if 0 < done <= len(vectors) else None


@named(MODEL_CALLBACK_NAME)
def before_model(callback_context: Any, llm_request: LlmRequest) -> None:
    """Writes the vector of this step into the session state, then lets the call go on."""
    vector = _current(llm_request)
    if vector is not None:
        callback_context.state[f"cb:{vector.text[:KEY_CHARS]}"] = vector.id
    return None


class SpanWriter(Callback):
    """Writes the vector of each step into the current span: as a key and as a value."""

    name = SPAN_WRITER_NAME

    def before_llm_call(self, context: Context, *args: Any, **kwargs: Any) -> Context:
        vector = _current(kwargs.get("llm_request"))
        if vector is not None and context.current_span is not None:
            context.current_span.set_attribute(f"xss.{vector.text[:KEY_CHARS]}", vector.text)
            context.current_span.set_attribute("xss.vector_id", vector.id)
        return context

    def after_tool_execution(self, context: Context, *args: Any, **kwargs: Any) -> Context:
        if context.current_span is not None:
            text = str((kwargs.get("args") or {}).get("text", ""))
            context.current_span.set_attribute(f"xss.tool.{text[:KEY_CHARS]}", text)
        return context


root_agent = LlmAgent(
    name=AGENT_NAME,
    model=ChunkedScriptedLlm(responses=[_respond] * 100_000),
    description=DESCRIPTION,
    instruction=INSTRUCTION,
    tools=[FunctionTool(echo_vector)],
    before_model_callback=before_model,
    callbacks=[*get_default_callbacks(), SpanWriter()],
)
