"""A model call's conversation and a tool call's arguments and result, read out of each
sender's layout into the OpenTelemetry GenAI conventions' (the runtime's own), so the span
details, the chat and search read one vocabulary whoever sent the span:

- ``gen_ai.input.messages`` / ``gen_ai.output.messages``: ``[{role, parts: [...]}]`` with
  parts ``{"type": "text", "content"}``, ``{"type": "tool_call", "id", "name",
  "arguments"}``, ``{"type": "tool_call_response", "id", "response"}``, ``{"type": "uri",
  "uri", "modality"}``; output messages with ``finish_reason``;
- ``gen_ai.system_instructions``: ``[{"type": "text", "content"}]``;
- ``gen_ai.tool.definitions``: ``[{"type": "function", "name", "description", "parameters"}]``;
- ``gen_ai.tool.call.arguments`` / ``gen_ai.tool.call.result``.

Layouts read (fixtures/README.md has their facts): OpenInference (flattened
``llm.input_messages.<i>.message.*``, ``llm.output_messages.*``, ``llm.tools.*``, and
``input.value`` / ``output.value`` holding an OpenAI request or response), OpenAI's chat
shape where the conventions' messages go (any-agent, and the conventions' releases before
parts), any-agent's ``gen_ai.output`` and ``gen_ai.tool.args``, OpenLLMetry's flattened
``gen_ai.prompt.<i>.*`` / ``gen_ai.completion.<i>.*`` / ``llm.request.functions.*`` and its
``traceloop.entity.input`` / ``output``, ADK's legacy ``gcp.vertex.agent.llm_request`` /
``llm_response`` (Gemini contents), and the conventions' per-message span events
(``gen_ai.user.message``, ``gen_ai.choice``, …).

Values are JSON text, as the runtime records them. Nothing here raises on what a sender
sent: a value of an unexpected shape is left alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from runtime.telemetry.attributes import GenAI

INPUT, OUTPUT = GenAI.INPUT_MESSAGES, "gen_ai.output.messages"
SYSTEM, TOOLS = GenAI.SYSTEM_INSTRUCTIONS, GenAI.TOOL_DEFINITIONS
ARGS, RESULT = GenAI.TOOL_ARGS, GenAI.TOOL_OUTPUT

_FLAT = re.compile(
    r"^(llm\.input_messages|llm\.output_messages|gen_ai\.prompt|gen_ai\.completion)\.(\d+)\.(.+)$"
)
_OI_TOOL = re.compile(r"^llm\.tools\.(\d+)\.tool\.json_schema$")
_TL_FUNCTION = re.compile(r"^llm\.request\.functions\.(\d+)\.(name|description|parameters)$")
_EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}


def conversation_read(
    attributes: Mapping[str, Any], events: list[Any], kind: str | None
) -> dict[str, Any]:
    """The conventions' keys ``attributes`` (and ``events``) say in another layout, for a span
    of ``kind``: each value as JSON text. Keys whose value is already in the conventions'
    shape are not in the result; a key whose value is in another shape is (the caller keeps
    what was sent)."""
    if kind == "model":
        return _model(attributes, events)
    if kind == "tool":
        return _tool(attributes)
    return {}


def in_conventions(key: str, value: Any) -> bool:
    """Whether ``value`` of ``key`` is already in the conventions' shape (messages with parts)."""
    if key not in (INPUT, OUTPUT):
        return True
    found = _json(value)
    return isinstance(found, list) and all(
        isinstance(m, dict) and isinstance(m.get("parts"), list) for m in found
    )


# ── model calls ─────────────────────────────────────────────────────────────────────────────
def _model(attributes: Mapping[str, Any], events: list[Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    flat = _flattened(attributes)
    for key, prefixes in ((INPUT, ("llm.input_messages", "gen_ai.prompt")),
                          (OUTPUT, ("llm.output_messages", "gen_ai.completion"))):  # fmt: skip
        sent = attributes.get(key)
        if sent is not None:
            if not in_conventions(key, sent):
                messages = _openai_messages(_json(sent))
                if messages is not None:
                    found[key] = messages
            continue
        for prefix in prefixes:
            if flat.get(prefix):
                found[key] = [_openai_message(m) for m in flat[prefix]]
                break
    if INPUT not in found and INPUT not in attributes:
        found.update(_from_values(attributes))
    if OUTPUT not in found and OUTPUT not in attributes and "gen_ai.output" in attributes:
        output = _any_agent_output(attributes)
        if output is not None:
            found[OUTPUT] = output
    if INPUT not in found and INPUT not in attributes:
        found.update(_adk_legacy(attributes))
    if INPUT not in found and INPUT not in attributes:
        found.update(_from_events(events))
    if OUTPUT in found:
        finish = attributes.get("llm.finish_reason")
        for message in found[OUTPUT]:
            if isinstance(finish, str) and isinstance(message, dict):
                message.setdefault("finish_reason", finish)
    _system_split(found, attributes)
    if TOOLS not in attributes and TOOLS not in found:
        tools = _tool_definitions(attributes)
        if tools:
            found[TOOLS] = tools
    return {key: _dumps(value) for key, value in found.items()}


def _flattened(attributes: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Flattened message lists (OpenInference's, OpenLLMetry's) as nested dicts, by prefix:
    ``llm.input_messages.0.message.tool_calls.1.tool_call.id`` → ``[{"message": {"tool_calls":
    [.., {"tool_call": {"id": ..}}]}}]``."""
    trees: dict[str, dict[int, Any]] = {}
    for key, value in attributes.items():
        match = _FLAT.match(key)
        if match is None:
            continue
        prefix, index, rest = match.group(1), int(match.group(2)), match.group(3)
        node = trees.setdefault(prefix, {}).setdefault(index, {})
        _put(node, rest.split("."), value)
    return {prefix: [_listed(tree[i]) for i in sorted(tree)] for prefix, tree in trees.items()}


def _put(node: dict[Any, Any], path: list[str], value: Any) -> None:
    for step in path[:-1]:
        key: Any = int(step) if step.isdigit() else step
        child = node.get(key)
        if not isinstance(child, dict):
            child = node[key] = {}
        node = child
    node[path[-1]] = value


def _listed(node: Any) -> Any:
    """Dicts whose keys are all numbers as lists, in their order."""
    if not isinstance(node, dict):
        return node
    if node and all(isinstance(k, int) for k in node):
        return [_listed(node[k]) for k in sorted(node)]
    return {k: _listed(v) for k, v in node.items()}


def _openai_messages(value: Any) -> list[dict[str, Any]] | None:
    if not isinstance(value, list) or not all(isinstance(m, dict) for m in value):
        return None
    return [_openai_message(m) for m in value]


def _openai_message(message: Any) -> dict[str, Any]:
    """One message in OpenAI's chat shape (or OpenInference's flattened ``message.*``,
    OpenLLMetry's flattened prompt) as the conventions' ``{role, parts}``."""
    if not isinstance(message, dict):
        return {"role": "unknown", "parts": [{"type": "text", "content": str(message)}]}
    if isinstance(message.get("message"), dict):
        message = message["message"]
    if isinstance(message.get("parts"), list):
        return message
    role = str(message.get("role") or "unknown")
    parts: list[dict[str, Any]] = []
    call_id = message.get("tool_call_id")
    content = message.get("content")
    if role == "tool" or (role == "function" and content is not None):
        response = _json(content) if isinstance(content, str) else content
        part: dict[str, Any] = {"type": "tool_call_response", "response": response}
        if call_id:
            part["id"] = str(call_id)
        if message.get("name"):
            part["name"] = str(message["name"])
        return {"role": "tool", "parts": [part]}
    parts.extend(_content_parts(content))
    parts.extend(_content_parts(message.get("contents")))
    for call in _list(message.get("tool_calls")):
        if isinstance(call, dict):
            parts.append(_tool_call(call))
    found: dict[str, Any] = {"role": role, "parts": parts}
    if message.get("finish_reason"):
        found["finish_reason"] = str(message["finish_reason"])
    return found


def _content_parts(content: Any) -> list[dict[str, Any]]:
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [{"type": "text", "content": content}]
    parts = []
    for item in _list(content):
        if isinstance(item, dict) and isinstance(item.get("message_content"), dict):
            item = item["message_content"]  # OpenInference: contents.<j>.message_content.*
        if not isinstance(item, dict):
            parts.append({"type": "text", "content": str(item)})
        elif item.get("type") in ("text", "input_text", "output_text") or "text" in item:
            parts.append({"type": "text", "content": str(item.get("text", ""))})
        elif item.get("type") in ("image", "image_url"):
            url = _dig(item, "image", "image", "url") or _dig(item, "image_url", "url") or ""
            parts.append({"type": "uri", "modality": "image", "uri": str(url)})
        else:
            parts.append(item)
    return parts


def _tool_call(call: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's ``{id, function: {name, arguments}}``, OpenInference's ``{tool_call: {id,
    function: {...}}}`` or OpenLLMetry's ``{id, name, arguments}`` as a ``tool_call`` part."""
    if isinstance(call.get("tool_call"), dict):
        call = call["tool_call"]
    inner = call.get("function")
    function: dict[str, Any] = inner if isinstance(inner, dict) else call
    part: dict[str, Any] = {
        "type": "tool_call",
        "name": str(function.get("name") or ""),
        "arguments": _json(function.get("arguments")),
    }
    if call.get("id"):
        part["id"] = str(call["id"])
    return part


def _from_values(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """OpenInference's ``input.value`` / ``output.value`` when they hold an OpenAI request
    (``{"messages": [...]}``) or response (``{"choices": [...]}``)."""
    found: dict[str, Any] = {}
    if attributes.get("input.mime_type") == "application/json":
        request = _json(attributes.get("input.value"))
        messages = _openai_messages(request.get("messages")) if isinstance(request, dict) else None
        if messages:
            found[INPUT] = messages
    if attributes.get("output.mime_type") == "application/json":
        response = _json(attributes.get("output.value"))
        choices = response.get("choices") if isinstance(response, dict) else None
        outputs = []
        for choice in _list(choices):
            if isinstance(choice, dict) and isinstance(choice.get("message"), dict):
                message = _openai_message(choice["message"])
                if choice.get("finish_reason"):
                    message["finish_reason"] = str(choice["finish_reason"])
                outputs.append(message)
        if outputs:
            found[OUTPUT] = outputs
    return found


def _any_agent_output(attributes: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """any-agent's ``gen_ai.output``: text, or (type ``json``) the calls the model made as
    ``[{"tool.name", "tool.args"}]``."""
    output = attributes.get("gen_ai.output")
    if attributes.get("gen_ai.output.type") == "json":
        calls = _json(output)
        if isinstance(calls, list) and all(isinstance(c, dict) and "tool.name" in c for c in calls):
            parts = [
                {
                    "type": "tool_call",
                    "name": str(c["tool.name"]),
                    "arguments": _json(c.get("tool.args")),
                }
                for c in calls
            ]
            return [{"role": "assistant", "parts": parts, "finish_reason": "tool_call"}]
    if isinstance(output, str):
        return [{"role": "assistant", "parts": [{"type": "text", "content": output}]}]
    return None


def _adk_legacy(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """ADK's legacy ``gcp.vertex.agent.llm_request`` / ``llm_response`` (Gemini's shape)."""
    found: dict[str, Any] = {}
    request = _json(attributes.get("gcp.vertex.agent.llm_request"))
    if isinstance(request, dict) and isinstance(request.get("contents"), list):
        found[INPUT] = [_gemini_content(c) for c in request["contents"] if isinstance(c, dict)]
        config = request.get("config")
        system = config.get("system_instruction") if isinstance(config, dict) else None
        if isinstance(system, str) and system:
            found[SYSTEM] = [{"type": "text", "content": system}]
    response = _json(attributes.get("gcp.vertex.agent.llm_response"))
    if isinstance(response, dict) and isinstance(response.get("content"), dict):
        message = _gemini_content(response["content"])
        if response.get("finish_reason"):
            message["finish_reason"] = str(response["finish_reason"]).lower()
        found[OUTPUT] = [message]
    return found


def _gemini_content(content: dict[str, Any]) -> dict[str, Any]:
    role = "assistant" if content.get("role") == "model" else str(content.get("role") or "user")
    parts: list[dict[str, Any]] = []
    for part in _list(content.get("parts")):
        if not isinstance(part, dict):
            continue
        if part.get("text") is not None:
            kind = "reasoning" if part.get("thought") else "text"
            parts.append({"type": kind, "content": str(part["text"])})
        elif isinstance(part.get("function_call"), dict):
            call = part["function_call"]
            found = {"type": "tool_call", "name": str(call.get("name") or ""),
                     "arguments": call.get("args") or {}}  # fmt: skip
            if call.get("id"):
                found["id"] = str(call["id"])
            parts.append(found)
        elif isinstance(part.get("function_response"), dict):
            answer = part["function_response"]
            found = {"type": "tool_call_response", "name": str(answer.get("name") or ""),
                     "response": answer.get("response")}  # fmt: skip
            if answer.get("id"):
                found["id"] = str(answer["id"])
            parts.append(found)
        else:
            parts.append({"type": next(iter(part), "part"), **part})
    return {"role": role, "parts": parts}


def _from_events(events: list[Any]) -> dict[str, Any]:
    """The conventions' per-message span events: ``gen_ai.{system,user,assistant,tool}
    .message`` (the message in attributes, or JSON in ``gen_ai.event.content``) and
    ``gen_ai.choice`` (``message``, ``finish_reason``)."""
    inputs, outputs = [], []
    for event in events:
        if not isinstance(event, dict) or not isinstance(event.get("attributes"), dict):
            continue
        body = dict(event["attributes"])
        content = _json(body.pop("gen_ai.event.content", None))
        if isinstance(content, dict):
            body.update(content)
        name = event.get("name")
        if name in _EVENT_ROLES:
            body.setdefault("role", _EVENT_ROLES[name])
            if body.get("role") == "tool" and "id" in body:
                body.setdefault("tool_call_id", body["id"])
            inputs.append(_openai_message(body))
        elif name == "gen_ai.choice":
            inner = body.get("message")
            message: dict[str, Any] = inner if isinstance(inner, dict) else body
            choice = _openai_message({"role": "assistant", **message})
            if body.get("finish_reason"):
                choice["finish_reason"] = str(body["finish_reason"])
            outputs.append(choice)
    found: dict[str, Any] = {}
    if inputs:
        found[INPUT] = inputs
    if outputs:
        found[OUTPUT] = outputs
    return found


def _system_split(found: dict[str, Any], attributes: Mapping[str, Any]) -> None:
    """System messages read into the input also as ``gen_ai.system_instructions`` (where the
    conventions keep them), when the sender set none."""
    if SYSTEM in attributes or SYSTEM in found or INPUT not in found:
        return
    texts = [
        part
        for message in found[INPUT]
        if isinstance(message, dict) and message.get("role") in ("system", "developer")
        for part in message.get("parts", [])
        if isinstance(part, dict) and part.get("type") == "text"
    ]
    if texts:
        found[SYSTEM] = texts
        found[INPUT] = [
            m for m in found[INPUT]
            if not (isinstance(m, dict) and m.get("role") in ("system", "developer"))
        ]  # fmt: skip


def _tool_definitions(attributes: Mapping[str, Any]) -> list[dict[str, Any]]:
    """OpenInference's ``llm.tools.<i>.tool.json_schema`` (an OpenAI tool) or OpenLLMetry's
    ``llm.request.functions.<i>.*`` as the conventions' definitions."""
    oi: dict[int, Any] = {}
    tl: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if match := _OI_TOOL.match(key):
            oi[int(match.group(1))] = _json(value)
        elif match := _TL_FUNCTION.match(key):
            tl.setdefault(int(match.group(1)), {})[match.group(2)] = value
    found = []
    for index in sorted(oi):
        schema = oi[index]
        function = schema.get("function", schema) if isinstance(schema, dict) else None
        if isinstance(function, dict):
            found.append(_definition(function))
    for index in sorted(tl):
        found.append(_definition({**tl[index], "parameters": _json(tl[index].get("parameters"))}))
    return found


def _definition(function: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {"type": "function", "name": str(function.get("name") or "")}
    if function.get("description"):
        found["description"] = str(function["description"])
    if function.get("parameters") is not None:
        found["parameters"] = function["parameters"]
    return found


# ── tool calls ──────────────────────────────────────────────────────────────────────────────
def _tool(attributes: Mapping[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    if ARGS not in attributes:
        for key in ("gen_ai.tool.args", "traceloop.entity.input"):
            if key in attributes:
                value = attributes[key]
                if key == "traceloop.entity.input":
                    value = _traceloop_call(value)
                found[ARGS] = value if isinstance(value, str) else _dumps(value)
                break
    if RESULT not in attributes:
        for key in ("gen_ai.output", "traceloop.entity.output"):
            if key in attributes:
                value = attributes[key]
                found[RESULT] = value if isinstance(value, str) else _dumps(value)
                break
    return found


def _traceloop_call(value: Any) -> Any:
    """OpenLLMetry's ``{"args": [...], "kwargs": {...}}``: the keyword arguments alone when
    the call had no positional ones."""
    found = _json(value)
    if isinstance(found, dict) and set(found) <= {"args", "kwargs"} and not found.get("args"):
        return found.get("kwargs") or {}
    return found


# ── helpers ─────────────────────────────────────────────────────────────────────────────────
def _json(value: Any) -> Any:
    """``value`` parsed when it is JSON text, else as it is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dig(value: Any, *path: str) -> Any:
    for step in path:
        if not isinstance(value, dict):
            return None
        value = value.get(step)
    return value
