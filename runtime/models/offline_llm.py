"""A deterministic stand-in model for running agents without an API key or network.

It picks a declared tool by word overlap with the user's message, fills the arguments from
the message, answers from tool results, and otherwise echoes the user's words verbatim.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any, ClassVar

from google.genai import types

from runtime.models.base_llm import BaseLlm
from runtime.models.llm_request import LlmRequest, system_instruction_text
from runtime.models.llm_response import LlmResponse

_STOP_WORDS = (
    "the a an is of what to for in on and or me my please can you i it be with about do does "
    "tell show give how where when who which why are was this that at by from"
)
_STOP = frozenset(_STOP_WORDS.split())
_TRANSFER = "transfer_to_agent"
_CONTEXT = "For context:"
_NUMBER = r"(?<!\w)-?\d+(?:\.\d+)?"


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _stem(word: str) -> str:
    for suffix in ("ing", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _keys(text: str) -> set[str]:
    """Stemmed content words: no stop words, no tokens shorter than three characters."""
    return {_stem(w) for w in _words(text) if w not in _STOP and len(w) > 2}


def _name_keys(name: str) -> set[str]:
    return _keys(re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name).replace("_", " "))


@dataclass
class _Param:
    name: str
    type: str
    enum: list[str]
    description: str


def _params(decl: types.FunctionDeclaration) -> list[_Param]:
    """The declared parameters, from a ``types.Schema`` or a JSON schema dict."""
    schema: Any = decl.parameters_json_schema
    if decl.parameters is not None:
        schema = decl.parameters.model_dump(mode="json", exclude_none=True)
    if not isinstance(schema, dict):
        return []
    out: list[_Param] = []
    for name, raw in (schema.get("properties") or {}).items():
        js: dict[str, Any] = raw if isinstance(raw, dict) else {}
        kind = js.get("type", "")
        if isinstance(kind, list):  # JSON schema ["string", "null"]
            kind = next((k for k in kind if k != "null"), "")
        enum = [str(e) for e in js.get("enum") or []]
        desc = str(js.get("description") or "")
        out.append(_Param(name, str(kind).lower(), enum, desc))
    return out


def _score(message: set[str], name: str, description: str) -> int:
    return 3 * len(message & _name_keys(name)) + len(message & _keys(description))


def _agents(instruction: str) -> list[tuple[str, str]]:
    """``- name: description`` lines, from the transfer list when the instruction has one."""
    marker = instruction.find("Agents you can transfer to:")
    text = instruction[marker:] if marker >= 0 else instruction
    return re.findall(r"^- ([\w.-]+): ?(.*)$", text, flags=re.MULTILINE)


def _guess(text: str, exclude: set[str]) -> str:
    """The message's own words minus stop words and words describing the tool."""
    kept = [
        w
        for w in re.findall(r"[^\W_]+", text)
        if w.lower() not in _STOP
        and (len(w) > 1 or w.isdigit())
        and _stem(w.lower()) not in exclude
    ]
    return " ".join(kept)


def _named_value(text: str, name: str) -> str | None:
    """The value following ``name`` in the message: ``city Paris``, ``city: "New York"``."""
    label = re.escape(name).replace("_", "[_ ]")
    m = re.search(rf"\b{label}\b\s*[:=]?\s*(?:\"([^\"]*)\"|(.*))", text, flags=re.IGNORECASE)
    if m is None:
        return None
    if m.group(1) is not None:
        return m.group(1)
    rest = [w for w in re.findall(r"[^\W_]+", m.group(2)) if w.lower() not in _STOP]
    return rest[0] if rest else None


def _args(decl: types.FunctionDeclaration, text: str) -> dict[str, Any]:
    params = _params(decl)
    naming = _name_keys(decl.name or "") | {k for p in params for k in _name_keys(p.name)}
    # Words of the description are dropped too, unless that leaves nothing: a docstring's
    # example ("e.g. France") must not swallow the very value the user gave.
    guess = _guess(text, naming | _keys(decl.description or "")) or _guess(text, naming)
    numbers = re.findall(_NUMBER, text)
    args: dict[str, Any] = {}
    for p in params:
        if p.type == "string" and p.enum:
            hit = next((e for e in p.enum if re.search(rf"\b{re.escape(e)}\b", text, re.I)), None)
            if hit is not None:
                args[p.name] = hit
        elif p.type == "string":
            value = _named_value(text, p.name) or guess
            if value:
                args[p.name] = value
        elif p.type in ("integer", "number") and numbers:
            raw = _named_value(text, p.name)
            raw = raw if raw and re.fullmatch(_NUMBER, raw) else numbers.pop(0)
            args[p.name] = int(float(raw)) if p.type == "integer" else float(raw)
        elif p.type == "boolean" and _name_keys(p.name) & _keys(text):
            args[p.name] = True
    return args


def _render(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return "nothing"
    return json.dumps(value, default=str, ensure_ascii=False, sort_keys=True)


def _answer_from(responses: list[types.FunctionResponse]) -> str:
    sentences = []
    for fr in responses:
        data = fr.response or {}
        if "error" in data:
            sentences.append(f'{fr.name} reported an error: "{_render(data["error"])}".')
            continue
        if set(data) == {"result"}:
            shown = _render(data["result"])
        else:
            shown = ", ".join(f"{k}: {_render(v)}" for k, v in data.items()) or "nothing"
        sentences.append(f"{fr.name} returned {shown.rstrip('.')}.")
    return "Offline model: " + " ".join(sentences)


def _count(request: LlmRequest) -> int:
    words = len(system_instruction_text(request).split())
    for content in request.contents:
        for p in content.parts or []:
            if p.text:
                words += len(p.text.split())
            for obj in (p.function_call, p.function_response):
                if obj is not None:
                    words += len(json.dumps(obj.model_dump(exclude_none=True), default=str).split())
    return words


class OfflineLlm(BaseLlm):
    """A keyless, deterministic model: tool choice by word overlap, answers from tool results,
    otherwise an echo of the user's words with the first sentence of the instruction."""

    model: str = "offline"
    provider: ClassVar[str] = "offline"

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"offline(-.*)?"]

    def _decide(self, request: LlmRequest) -> types.Part:
        contents = request.contents
        turn = None  # the last user turn; other agents' "For context:" turns do not count
        for i, content in enumerate(contents):
            if content.role == "user" and (content.parts or [types.Part()])[0].text != _CONTEXT:
                turn = i
        parts = (contents[turn].parts or []) if turn is not None else []
        results = [p.function_response for p in parts if p.function_response]
        if results:
            return types.Part(text=_answer_from(results))
        text = "".join(p.text for p in parts if p.text and not p.thought)
        call = self._pick(request, text)
        if call is not None:
            later = contents[turn + 1 :] if turn is not None else []
            last_model = next((c for c in reversed(later) if c.role == "model"), None)
            previous = [p.function_call for p in (last_model.parts or [])] if last_model else []
            if any(fc and fc.name == call.name and fc.args == call.args for fc in previous):
                old = [
                    p.function_response
                    for c in contents
                    for p in c.parts or []
                    if p.function_response and p.function_response.name == call.name
                ]
                if old:
                    return types.Part(text=_answer_from(old[-1:]))
                return types.Part(text=f"Offline model: {call.name} was already called.")
            return types.Part(function_call=call)
        instruction = " ".join(system_instruction_text(request).split())
        m = re.match(r"(.+?[.!?])(\s|$)", instruction)
        first = (m.group(1) if m else instruction)[:200].rstrip(".")
        answer = f'Offline model (no API key set): you said "{text}".'
        return types.Part(text=f"{answer} My instructions: {first}." if first else answer)

    def _pick(self, request: LlmRequest, text: str) -> types.FunctionCall | None:
        message = _keys(text)
        best: tuple[int, types.FunctionCall] | None = None
        for tool in request.config.tools or []:
            for decl in getattr(tool, "function_declarations", None) or []:
                name = decl.name or ""
                if name == _TRANSFER:
                    scored = [
                        (_score(message, a, d), a)
                        for a, d in _agents(system_instruction_text(request))
                        if message & _name_keys(a)
                    ]
                    if not scored:
                        continue
                    score, agent = max(scored, key=lambda s: s[0])  # first of equals
                    call = types.FunctionCall(name=name, args={"agent_name": agent})
                else:
                    words = " ".join(f"{p.name} {p.description}" for p in _params(decl))
                    score = _score(message, name, decl.description or "")
                    score += len(message & (_keys(words) | _name_keys(words)))
                    call = types.FunctionCall(name=name, args=_args(decl, text))
                if score > 0 and (best is None or score > best[0]):
                    best = (score, call)
        return best[1] if best else None

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        part = self._decide(llm_request)
        if part.text is not None and llm_request.config.response_mime_type == "application/json":
            part = types.Part(text=json.dumps({"answer": part.text}, ensure_ascii=False))
        if part.text is not None:
            answer_words = len(part.text.split())
            if stream:
                pieces = re.split(r"(?<= )", part.text)
                size = max(1, -(-len(pieces) // 3))
                for i in range(0, len(pieces), size):
                    chunk = "".join(pieces[i : i + size])
                    yield LlmResponse(
                        content=types.Content(role="model", parts=[types.Part(text=chunk)]),
                        partial=True,
                        model_version=self.model,
                    )
        else:
            fc = part.function_call
            answer_words = len(json.dumps(fc.args if fc else {}).split()) + 1
        prompt_words = _count(llm_request)
        yield LlmResponse(
            content=types.Content(role="model", parts=[part]),
            finish_reason=types.FinishReason.STOP,
            usage_metadata=types.GenerateContentResponseUsageMetadata(
                prompt_token_count=prompt_words,
                candidates_token_count=answer_words,
                total_token_count=prompt_words + answer_words,
            ),
            model_version=self.model,
        )
