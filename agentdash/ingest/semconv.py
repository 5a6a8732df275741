"""What an outside span is, in the timeline's terms: the OpenTelemetry GenAI conventions,
OpenInference's, OpenLLMetry's, any-agent's and ADK's attributes mapped onto the runtime's own
(agent, model, tool; the agent's, model's and tool's names; token counts; a model call's
conversation and a tool's arguments and result: ``ingest.messages``) so the tree, the detail
views, the token totals and search treat them alike.

Keys a span does not carry are added (ingest lists them in ``agentdash.ingest.added``). A key
it carries in another shape than the conventions' (messages in OpenAI's chat shape under
``gen_ai.input.messages``) is replaced by the conventions' shape, what was sent kept under
``agentdash.ingest.sent.<key>``; an OTLP export puts it back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentdash.ingest.messages import conversation_read
from runtime.telemetry.attributes import AgentDash, GenAI, StepKind

# gen_ai.operation.name → kind
_OPERATION_KINDS = {
    "invoke_workflow": StepKind.INVOCATION,  # ADK's root: one run
    "invoke_agent": StepKind.AGENT,
    "create_agent": StepKind.AGENT,
    "chat": StepKind.MODEL,
    "text_completion": StepKind.MODEL,
    "generate_content": StepKind.MODEL,
    "embeddings": StepKind.MODEL,
    "execute_tool": StepKind.TOOL,
    "retrieval": StepKind.TOOL,
    "call_llm": StepKind.MODEL,  # any-agent's
}
_TRACELOOP_REQUESTS = ("chat", "completion", "embedding", "rerank")
# traceloop.span.kind (OpenLLMetry's decorators) → kind
_TRACELOOP_KINDS = {
    "workflow": StepKind.AGENT,
    "agent": StepKind.AGENT,
    "tool": StepKind.TOOL,
}
# openinference.span.kind → kind
_OPENINFERENCE_KINDS = {
    "AGENT": StepKind.AGENT,
    "CHAIN": StepKind.AGENT,
    "LLM": StepKind.MODEL,
    "EMBEDDING": StepKind.MODEL,
    "TOOL": StepKind.TOOL,
    "RETRIEVER": StepKind.TOOL,
    "RERANKER": StepKind.TOOL,
}
# Span names (ADK and others name spans "<operation> <subject>")
_NAME_KINDS = (
    ("invocation", StepKind.INVOCATION),  # ADK's legacy root, which carries no attribute
    ("invoke_workflow", StepKind.INVOCATION),
    ("invoke_agent", StepKind.AGENT),
    ("call_llm", StepKind.MODEL),
    ("generate_content", StepKind.MODEL),
    ("chat", StepKind.MODEL),
    ("execute_tool", StepKind.TOOL),
)
_TRACELOOP_SESSION = "traceloop.association.properties.session_id"
SENT_PREFIX = AgentDash.INGEST_SENT

# Same meaning, other names: (ours, theirs in order of preference)
_ALIASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        GenAI.CONVERSATION_ID,
        ("session.id", "gcp.vertex.agent.session_id", _TRACELOOP_SESSION),
    ),
    (AgentDash.INVOCATION_ID, ("gcp.vertex.agent.invocation_id",)),
    (AgentDash.EVENT_ID, ("gcp.vertex.agent.event_id",)),
    (AgentDash.USER_ID, ("user.id", "enduser.id", "traceloop.association.properties.user_id")),
    (GenAI.AGENT_NAME, ("agent.name",)),
    (GenAI.REQUEST_MODEL, ("llm.model_name", "gen_ai.response.model")),
    (GenAI.PROVIDER_NAME, ("gen_ai.system", "llm.provider", "llm.system")),
    (GenAI.USAGE_INPUT_TOKENS, ("llm.token_count.prompt", "gen_ai.usage.prompt_tokens")),
    (
        GenAI.USAGE_OUTPUT_TOKENS,
        ("llm.token_count.completion", "gen_ai.usage.completion_tokens"),
    ),
    (GenAI.USAGE_CACHE_READ_INPUT_TOKENS, ("llm.token_count.prompt_details.cache_read",)),
    (GenAI.USAGE_REASONING_OUTPUT_TOKENS, ("llm.token_count.completion_details.reasoning",)),
    (GenAI.TOOL_NAME, ("tool.name",)),
    (GenAI.TOOL_CALL_ID, ("tool_call.id", "tool.id")),
    (GenAI.TOOL_DESCRIPTION, ("tool.description",)),
    (GenAI.TOOL_ARGS, ("gcp.vertex.agent.tool_call_args",)),
    (GenAI.TOOL_OUTPUT, ("gcp.vertex.agent.tool_response",)),
)
CONVERSATION_KEYS = (
    GenAI.CONVERSATION_ID,
    "session.id",
    "gcp.vertex.agent.session_id",
    _TRACELOOP_SESSION,
)
"""Where a sender puts the conversation a span belongs to, in order of preference."""


def span_kind(attributes: Mapping[str, Any], name: str) -> str | None:
    """``agent``, ``model``, ``tool`` (or the kind the span names itself), else ``None``."""
    own = attributes.get(AgentDash.SPAN_KIND)
    if isinstance(own, str) and own:
        return own
    operation = attributes.get(GenAI.OPERATION_NAME)
    if isinstance(operation, str) and operation in _OPERATION_KINDS:
        return _OPERATION_KINDS[operation]
    openinference = attributes.get("openinference.span.kind")
    if isinstance(openinference, str) and openinference.upper() in _OPENINFERENCE_KINDS:
        return _OPENINFERENCE_KINDS[openinference.upper()]
    traceloop = attributes.get("traceloop.span.kind")
    if isinstance(traceloop, str) and traceloop in _TRACELOOP_KINDS:
        return _TRACELOOP_KINDS[traceloop]
    if attributes.get("llm.request.type") in _TRACELOOP_REQUESTS:  # OpenLLMetry before 0.5x
        return StepKind.MODEL
    first = name.split(" ", 1)[0]
    for prefix, kind in _NAME_KINDS:
        if first == prefix:
            return kind
    return None


def conversation_id(attributes: Mapping[str, Any]) -> str | None:
    """The conversation (session) id the sender set on the span, if any."""
    for key in CONVERSATION_KEYS:
        value = attributes.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip():
            return str(value).strip()[:200]
    return None


def mapped(
    attributes: Mapping[str, Any], name: str, events: list[Any] | None = None
) -> dict[str, Any]:
    """``attributes`` with the runtime's keys added where a known other name (or shape, or
    ``events``) carries them (module docstring)."""
    found = dict(attributes)
    for ours, theirs in _ALIASES:
        if ours in found:
            continue
        for key in theirs:
            if found.get(key) not in (None, ""):
                found[ours] = found[key]
                break
    kind = span_kind(found, name)
    if kind is not None:
        found.setdefault(AgentDash.SPAN_KIND, kind)
        subject = name.split(" ", 1)[1].strip() if " " in name else ""
        if kind == "agent" and subject:
            found.setdefault(GenAI.AGENT_NAME, subject)
        elif kind == "tool" and subject:
            found.setdefault(GenAI.TOOL_NAME, subject)
        if kind == "tool" and "openinference.span.kind" in found:
            # OpenInference: input/output values; instrumentors that leave input.value out
            # put the arguments in tool.parameters (which the spec calls the schema).
            for key in ("input.value", "tool.parameters"):
                if key in found:
                    found.setdefault(GenAI.TOOL_ARGS, found[key])
            if "output.value" in found:
                found.setdefault(GenAI.TOOL_OUTPUT, found["output.value"])
        if kind == "agent" and "traceloop.entity.name" in found:
            found.setdefault(GenAI.AGENT_NAME, found["traceloop.entity.name"])
        if kind == "tool" and "traceloop.entity.name" in found:
            found.setdefault(GenAI.TOOL_NAME, found["traceloop.entity.name"])
    for key, value in conversation_read(found, events or [], kind).items():
        if key in found:
            found[SENT_PREFIX + key] = found[key]
        found[key] = value
    return found
