"""The layouts senders record a model call's messages in, each read into the GenAI
conventions' shape (``messages`` says which, and where each goes). Every reader takes what
was sent and never raises: a value of an unexpected shape is left out."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from runtime.telemetry.attributes import GenAI

INPUT, OUTPUT = GenAI.INPUT_MESSAGES, "gen_ai.output.messages"
INFERENCE_EVENT = "gen_ai.client.inference.operation.details"
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


def flattened(attributes: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
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


def openai_messages(value: Any) -> list[dict[str, Any]] | None:
    if not isinstance(value, list) or not all(isinstance(m, dict) for m in value):
        return None
    return [openai_message(m) for m in value]


def openai_message(message: Any) -> dict[str, Any]:
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
        response = json_value(content) if isinstance(content, str) else content
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
        "arguments": json_value(function.get("arguments")),
    }
    if call.get("id"):
        part["id"] = str(call["id"])
    return part


def from_values(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """OpenInference's ``input.value`` / ``output.value`` when they hold an OpenAI request
    (``{"messages": [...]}``) or response (``{"choices": [...]}``)."""
    found: dict[str, Any] = {}
    if attributes.get("input.mime_type") == "application/json":
        request = json_value(attributes.get("input.value"))
        messages = openai_messages(request.get("messages")) if isinstance(request, dict) else None
        if messages:
            found[INPUT] = messages
    if attributes.get("output.mime_type") == "application/json":
        response = json_value(attributes.get("output.value"))
        choices = response.get("choices") if isinstance(response, dict) else None
        outputs = []
        for choice in _list(choices):
            if isinstance(choice, dict) and isinstance(choice.get("message"), dict):
                message = openai_message(choice["message"])
                if choice.get("finish_reason"):
                    message["finish_reason"] = str(choice["finish_reason"])
                outputs.append(message)
        if outputs:
            found[OUTPUT] = outputs
    return found


def any_agent_output(attributes: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """any-agent's ``gen_ai.output``: text, or (type ``json``) the calls the model made as
    ``[{"tool.name", "tool.args"}]``."""
    output = attributes.get("gen_ai.output")
    if attributes.get("gen_ai.output.type") == "json":
        calls = json_value(output)
        if isinstance(calls, list) and all(isinstance(c, dict) and "tool.name" in c for c in calls):
            parts = [
                {
                    "type": "tool_call",
                    "name": str(c["tool.name"]),
                    "arguments": json_value(c.get("tool.args")),
                }
                for c in calls
            ]
            return [{"role": "assistant", "parts": parts, "finish_reason": "tool_call"}]
    if isinstance(output, str):
        return [{"role": "assistant", "parts": [{"type": "text", "content": output}]}]
    return None


def adk_legacy(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """ADK's legacy ``gcp.vertex.agent.llm_request`` / ``llm_response`` (Gemini's shape)."""
    found: dict[str, Any] = {}
    request = json_value(attributes.get("gcp.vertex.agent.llm_request"))
    if isinstance(request, dict) and isinstance(request.get("contents"), list):
        found[INPUT] = [_gemini_content(c) for c in request["contents"] if isinstance(c, dict)]
        config = request.get("config")
        system = config.get("system_instruction") if isinstance(config, dict) else None
        if isinstance(system, str) and system:
            found[SYSTEM] = [{"type": "text", "content": system}]
    response = json_value(attributes.get("gcp.vertex.agent.llm_response"))
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


def from_events(events: list[Any]) -> dict[str, Any]:
    """The conventions' per-message span events: ``gen_ai.{system,user,assistant,tool}
    .message`` (the message in attributes, or JSON in ``gen_ai.event.content``) and
    ``gen_ai.choice`` (``message``, ``finish_reason``); or their latest single event,
    ``gen_ai.client.inference.operation.details``, holding the messages in the conventions'
    own shape (sent as a log record: ``span_logs``)."""
    inputs, outputs = [], []
    for event in events:
        if not isinstance(event, dict) or not isinstance(event.get("attributes"), dict):
            continue
        if event.get("name") == INFERENCE_EVENT:
            return _inference_details(event["attributes"])
        body = dict(event["attributes"])
        content = json_value(body.pop("gen_ai.event.content", None))
        if isinstance(content, dict):
            body.update(content)
        name = event.get("name")
        if name in _EVENT_ROLES:
            body.setdefault("role", _EVENT_ROLES[name])
            if body.get("role") == "tool" and "id" in body:
                body.setdefault("tool_call_id", body["id"])
            inputs.append(openai_message(body))
        elif name == "gen_ai.choice":
            inner = body.get("message")
            message: dict[str, Any] = inner if isinstance(inner, dict) else body
            choice = openai_message({"role": "assistant", **message})
            if body.get("finish_reason"):
                choice["finish_reason"] = str(body["finish_reason"])
            outputs.append(choice)
    found: dict[str, Any] = {}
    if inputs:
        found[INPUT] = inputs
    if outputs:
        found[OUTPUT] = outputs
    return found


def _inference_details(attributes: dict[str, Any]) -> dict[str, Any]:
    found = {}
    for key in (INPUT, OUTPUT, SYSTEM, TOOLS):
        value = json_value(attributes.get(key))
        if isinstance(value, list):
            found[key] = value
    return found


def system_split(found: dict[str, Any], attributes: Mapping[str, Any]) -> None:
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


def tool_definitions(attributes: Mapping[str, Any]) -> list[dict[str, Any]]:
    """OpenInference's ``llm.tools.<i>.tool.json_schema`` (an OpenAI tool) or OpenLLMetry's
    ``llm.request.functions.<i>.*`` as the conventions' definitions."""
    oi: dict[int, Any] = {}
    tl: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if match := _OI_TOOL.match(key):
            oi[int(match.group(1))] = json_value(value)
        elif match := _TL_FUNCTION.match(key):
            tl.setdefault(int(match.group(1)), {})[match.group(2)] = value
    found = []
    for index in sorted(oi):
        schema = oi[index]
        function = schema.get("function", schema) if isinstance(schema, dict) else None
        if isinstance(function, dict):
            found.append(_definition(function))
    for index in sorted(tl):
        found.append(
            _definition({**tl[index], "parameters": json_value(tl[index].get("parameters"))})
        )
    return found


def _definition(function: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {"type": "function", "name": str(function.get("name") or "")}
    if function.get("description"):
        found["description"] = str(function["description"])
    if function.get("parameters") is not None:
        found["parameters"] = function["parameters"]
    return found


# ── helpers ─────────────────────────────────────────────────────────────────────────────────
def json_value(value: Any) -> Any:
    """``value`` parsed when it is JSON text, else as it is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dig(value: Any, *path: str) -> Any:
    for step in path:
        if not isinstance(value, dict):
            return None
        value = value.get(step)
    return value
