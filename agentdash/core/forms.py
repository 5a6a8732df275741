"""Form fields for what people type that the database must be able to store."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.forms.fields import InvalidJSONInput

from agentdash.core.hygiene import MAX_JSON_DEPTH, JsonTooDeep, json_loads_bounded, value_problem


class BoundedJSONField(forms.JSONField):
    """``forms.JSONField`` for text a person typed: JSON nested deeper than
    :data:`~agentdash.core.hygiene.MAX_JSON_DEPTH` is refused *before* it is parsed (Python's
    parser would raise ``RecursionError`` near 1,000 levels, a 500), and so are values no
    database stores — a NUL or an unpaired surrogate in a string or key (``"\\u0000"``,
    ``"\\ud800"``), ``NaN`` and infinities (``1e999``), integers longer than Python parses
    (4,300 digits) — each a form error that says what and where.

    A form shown again with the error keeps the text as typed (deep text included)."""

    default_error_messages = {
        "too_deep": f"The JSON is nested deeper than {MAX_JSON_DEPTH} levels.",
        "unstorable": "The JSON cannot be stored: %(problem)s.",
        "not_finite": "The JSON has a number that is not finite (NaN or too large).",
    }

    def to_python(self, value: Any) -> Any:
        if self.disabled or not isinstance(value, str) or value in self.empty_values:
            return super().to_python(value)
        code, params = _refusal(value)
        if code is not None:
            raise ValidationError(self.error_messages[code], code=code, params=params)
        return super().to_python(value)

    def bound_data(self, data: Any, initial: Any) -> Any:
        # What the form shows again: text it refuses stays text as typed, never parsed (a
        # parsed lone surrogate would break the page's UTF-8; deep JSON the parser).
        if not self.disabled and isinstance(data, str) and _refusal(data)[0] is not None:
            return InvalidJSONInput(data)
        return super().bound_data(data, initial)


def _refusal(text: str) -> tuple[str | None, dict[str, Any]]:
    """Why :class:`BoundedJSONField` refuses ``text`` (an error code and its params), or
    ``(None, {})``."""
    try:
        parsed = json_loads_bounded(text)
    except JsonTooDeep:
        return "too_deep", {}
    except ValueError:  # bad JSON, or an integer past Python's digit limit
        return "invalid", {"value": text}
    problem = value_problem(parsed)
    if problem:
        return "unstorable", {"problem": problem}
    try:
        json.dumps(parsed, allow_nan=False)
    except ValueError:
        return "not_finite", {}
    return None, {}
