"""The offline model as a judge: asked for a verdict — JSON output whose schema has a
``value`` and an ``explanation`` —, it answers one by a rule it states, not by judgement: the
text it judges (between ``<output>`` and ``</output>`` in the last user message, else that
whole message) is bad when it says something failed, good otherwise. Good is ``true``, the
range's maximum or the first category; bad is ``false``, the minimum or the last category."""

from __future__ import annotations

import json
import re
from typing import Any

from google.genai import types

from runtime.models.llm_request import LlmRequest

FAILURE_WORDS = ("error", "failed", "fails", "could not", "cannot", "can't", "unable",
                 "sorry", "not found", "was stopped", "refuse")  # fmt: skip
_OUTPUT = re.compile(r"<output>(.*?)</output>", re.S)


def _schema(request: LlmRequest) -> types.Schema | None:
    schema = request.config.response_schema
    if isinstance(schema, dict):
        schema = types.Schema.model_validate(schema)
    return schema if isinstance(schema, types.Schema) else None


def asks_for_verdict(request: LlmRequest) -> bool:
    schema = _schema(request)
    props = (schema.properties or {}) if schema is not None else {}
    return request.config.response_mime_type == "application/json" and {
        "value",
        "explanation",
    } <= set(props)


def verdict(request: LlmRequest, user_text: str) -> str:
    """The verdict as JSON text (see the module docstring)."""
    schema = _schema(request)
    assert schema is not None and schema.properties
    found = _OUTPUT.search(user_text)
    judged = (found.group(1) if found else user_text).lower()
    said = next((w for w in FAILURE_WORDS if w in judged), None)
    good = said is None
    value = _value(schema.properties["value"], good)
    why = (f"Offline judge: the output says {said!r}, so it counts as bad." if said
           else "Offline judge: the output names no failure, so it counts as good.")  # fmt: skip
    return json.dumps({"value": value, "explanation": why}, ensure_ascii=False)


def _value(schema: types.Schema, good: bool) -> Any:
    if schema.enum:
        return schema.enum[0] if good else schema.enum[-1]
    if schema.type in (types.Type.NUMBER, types.Type.INTEGER):
        low = schema.minimum if schema.minimum is not None else 0
        high = schema.maximum if schema.maximum is not None else 1
        return high if good else low
    return good
