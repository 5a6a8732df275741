"""A deterministic stand-in model for running agents without an API key or network.

It is a handful of rules, not a language model, and says so: every text answer starts with
"Offline model: ". It picks the declared tool or transfer target whose name and description
share the most words with the user's message, fills the arguments from the message (a SQL
parameter from a statement the message contains, or from its plain English over the tables
the tool documents), answers from tool results, and otherwise echoes the user's words
verbatim with the first sentence of its instructions. Asked for a verdict (an evaluator's
JSON of ``value`` and ``explanation``), it gives one by a stated rule (``_offline_judge``).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import ClassVar

from google.genai import types

from runtime.models._offline_answer import PREFIX, answer_from
from runtime.models._offline_judge import asks_for_verdict, verdict
from runtime.models._offline_sql import is_sql_param, schema_from, sql_for, typed_sql
from runtime.models._offline_text import fill_args, keys, name_keys, params, score
from runtime.models.base_llm import BaseLlm
from runtime.models.llm_request import LlmRequest, is_retold, system_instruction_text
from runtime.models.llm_response import LlmResponse

_TRANSFER = "transfer_to_agent"
_FOLLOW_UP = re.compile(r"\s*(and|also|what about|how about)\b", re.IGNORECASE)
MAX_MESSAGE = 20_000
"""Longer messages are echoed, not searched for tools (the rules are for questions)."""


@dataclass
class _Choice:
    """A tool call to make, or (``call`` None) why the chosen tool cannot be called."""

    score: int
    call: types.FunctionCall | None
    why_not: str = ""


def _agents(instruction: str) -> list[tuple[str, str]]:
    """``- name: description`` lines, from the transfer list when the instruction has one."""
    marker = instruction.find("Agents you can transfer to:")
    text = instruction[marker:] if marker >= 0 else instruction
    return re.findall(r"^- ([\w.-]+): ?(.*)$", text, flags=re.MULTILINE)


def _declarations(request: LlmRequest) -> list[types.FunctionDeclaration]:
    return [
        decl
        for tool in request.config.tools or []
        for decl in getattr(tool, "function_declarations", None) or []
    ]


def _sql_param(decl: types.FunctionDeclaration) -> str | None:
    """The name of ``decl``'s string parameter taking SQL, if it has one."""
    return next(
        (
            p.name
            for p in params(decl)
            if p.type == "string" and is_sql_param(p.name, p.description)
        ),
        None,
    )


def _call(decl: types.FunctionDeclaration, text: str, score_: int) -> _Choice:
    """A call of ``decl`` with arguments from ``text``, or why the SQL could not be made."""
    name = decl.name or ""
    sql_param = _sql_param(decl)
    if sql_param is None:
        return _Choice(score_, types.FunctionCall(name=name, args=fill_args(decl, text)))
    documented = " ".join([decl.description or "", *(p.description for p in params(decl))])
    draft = sql_for(text, documented)
    if draft.sql is None:
        tables = ", ".join(t.describe() for t in schema_from(documented)) or "none are documented"
        why = f"{draft.why_not}. The tables I know: {tables}"
        return _Choice(score_, None, why)
    return _Choice(score_, types.FunctionCall(name=name, args={sql_param: draft.sql}))


def _quote(text: str) -> str:
    return f'"{text}"'


class OfflineLlm(BaseLlm):
    """A keyless, deterministic model: tool choice by word overlap, answers from tool results,
    otherwise an echo of the user's words with the first sentence of the instruction. Every
    text answer starts with "Offline model: "."""

    model: str = "offline"
    provider: ClassVar[str] = "offline"

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"offline(-.*)?"]

    def _decide(self, request: LlmRequest) -> types.Part:
        contents = request.contents
        turn = None  # the last user turn; other agents' "For context:" turns do not count
        for i, content in enumerate(contents):
            if content.role == "user" and not is_retold(content):
                turn = i
        parts = (contents[turn].parts or []) if turn is not None else []
        results = [p.function_response for p in parts if p.function_response]
        if results and turn is not None:
            before = contents[turn - 1] if turn > 0 else None
            calls = [p.function_call for p in (before.parts or []) if p.function_call] if (
                before is not None and before.role == "model"
            ) else []  # fmt: skip
            return types.Part(text=answer_from(results, calls))
        text = "".join(p.text for p in parts if p.text and not p.thought)
        if asks_for_verdict(request):
            return types.Part(text=verdict(request, text))
        choice = self._pick(request, text) if len(text) <= MAX_MESSAGE else None
        if choice is None and _FOLLOW_UP.match(text) and len(text) <= MAX_MESSAGE:
            choice = self._follow_up(request, text, contents[: turn or 0])
        if choice is not None and choice.call is None:
            return types.Part(
                text=f"{PREFIX}I could not turn {_quote(text)} into SQL: {choice.why_not}."
            )
        if choice is not None and choice.call is not None:
            return self._unless_repeated(choice.call, contents, turn)
        return types.Part(text=self._echo(request, text))

    def _unless_repeated(
        self, call: types.FunctionCall, contents: list[types.Content], turn: int | None
    ) -> types.Part:
        """``call``, unless the model just made the same call in this turn: then the answer
        from its result (a tool that keeps matching must not loop)."""
        later = contents[turn + 1 :] if turn is not None else []
        last_model = next((c for c in reversed(later) if c.role == "model"), None)
        previous = [p.function_call for p in (last_model.parts or [])] if last_model else []
        if not any(fc and fc.name == call.name and fc.args == call.args for fc in previous):
            return types.Part(function_call=call)
        old = [
            p.function_response
            for c in contents
            for p in c.parts or []
            if p.function_response and p.function_response.name == call.name
        ]
        if old:
            return types.Part(text=answer_from(old[-1:], [call]))
        return types.Part(text=f"{PREFIX}{call.name} was already called.")

    def _echo(self, request: LlmRequest, text: str) -> str:
        instruction = " ".join(system_instruction_text(request).split())
        m = re.match(r"(.+?[.!?])(\s|$)", instruction)
        first = (m.group(1) if m else instruction)[:200].rstrip(".")
        answer = f"{PREFIX}you said {_quote(text)}."
        if first:
            answer += f" My instructions: {first}."
        declared = _declarations(request)
        tools = [d.name or "" for d in declared if d.name != _TRANSFER]
        transfers = len(tools) < len(declared)
        agents = [a for a, _ in _agents(system_instruction_text(request))] if transfers else []
        if len(text) > MAX_MESSAGE:
            answer += f" (Messages over {MAX_MESSAGE:,} characters are not searched for tools.)"
        elif tools or agents:
            listed = "; ".join(
                f"{what}: {', '.join(names)}"
                for what, names in (("tools", tools), ("agents", agents))
                if names
            )
            answer += f" Nothing I can call matched your words ({listed})."
        return answer

    def _pick(self, request: LlmRequest, text: str) -> _Choice | None:
        message = keys(text)
        typed = typed_sql(text) is not None
        best: _Choice | None = None
        for decl in _declarations(request):
            name = decl.name or ""
            if name == _TRANSFER:
                scored = [
                    (score(message, agent, description, vague=False), agent)
                    for agent, description in _agents(system_instruction_text(request))
                ]
                points, agent = max(scored, key=lambda s: s[0], default=(0, ""))
                choice = _Choice(points, types.FunctionCall(name=name, args={"agent_name": agent}))
            else:
                words = " ".join(f"{p.name} {p.description}" for p in params(decl))
                points = score(message, name, decl.description or "")
                points += len(message & (keys(words) | name_keys(words)))
                if typed and _sql_param(decl) is not None:
                    points += 5  # a statement typed out is meant for the SQL tool
                choice = _Choice(points, None) if points <= 0 else _call(decl, text, points)
            if choice.score > 0 and (best is None or choice.score > best.score):
                best = choice
        return best

    def _follow_up(
        self, request: LlmRequest, text: str, history: list[types.Content]
    ) -> _Choice | None:
        """ "And Japan?": the tool this agent called last, again, with the new words."""
        declared = {d.name: d for d in _declarations(request) if d.name != _TRANSFER}
        for content in reversed(history):
            for part in reversed(content.parts or []) if content.role == "model" else []:
                call = part.function_call
                if call is not None and call.name in declared:
                    return _call(declared[call.name], text, 1)
        return None

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        part = self._decide(llm_request)
        json_out = llm_request.config.response_mime_type == "application/json"
        if part.text is not None and json_out and not asks_for_verdict(llm_request):
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
