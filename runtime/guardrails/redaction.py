"""Output redaction: an ``after_model`` guardrail masking what must not be shown.

Built-in detectors (``redact``): ``email``, ``phone`` (9–15 digits, separators allowed),
``card`` (13–19 digits passing the Luhn check, so order numbers and dates stay), ``key``
(provider key shapes — ``sk-…``, ``AKIA…``, ``AIza…``, ``ghp_…``, ``xox?-…``, PEM private
keys — and ``api_key=…``/``token: …`` assignments). ``patterns`` adds named regular
expressions. Each match becomes ``mask`` with ``{label}`` filled in.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, ClassVar, Literal

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field, field_validator

from runtime.callbacks.naming import Hook
from runtime.contexts.callback_context import CallbackContext
from runtime.guardrails.policy import Guardrail
from runtime.models.llm_response import LlmResponse
from runtime.telemetry.attributes import Decision

__all__ = ["DETECTORS", "OutputRedaction", "OutputRedactionConfig", "redact_text"]

Detector = Literal["card", "key", "email", "phone"]
ALL_DETECTORS: tuple[Detector, ...] = ("card", "key", "email", "phone")

# Order matters: a card number is not also a phone number, a key's digits not a card.
DETECTORS: dict[str, tuple[str, re.Pattern[str]]] = {
    "key": (
        "key",
        re.compile(
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)"
            r"|\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}"
            r"|\bAKIA[0-9A-Z]{16}\b"
            r"|\bAIza[0-9A-Za-z_-]{35}"
            r"|\bgh[pousr]_[A-Za-z0-9]{30,}"
            r"|\bxox[abprs]-[A-Za-z0-9-]{10,}"
            r"|(?i:\b(?:api[_-]?key|secret|token|password|passwd)\b\s*[:=]\s*)[\"']?[^\s\"']{6,}"
        ),
    ),
    "card": ("card number", re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")),
    "email": (
        "e-mail",
        re.compile(r"(?<![\w.%+-])[\w.%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"),
    ),
    "phone": (
        "phone number",
        re.compile(r"(?<![\w+])(?<!\d[\s().-])\+?\d(?:[\s().-]{0,2}\d){8,14}(?!\w)(?![\s().-]\d)"),
    ),
}


def _luhn(number: str) -> bool:
    digits = [int(c) for c in number if c.isdigit()]
    total = 0
    for i, digit in enumerate(reversed(digits)):
        if i % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


class OutputRedactionConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    redact: list[Detector] = Field(default_factory=lambda: list(ALL_DETECTORS))
    patterns: dict[str, str] = Field(default_factory=dict, max_length=50)
    mask: str = Field(default="[{label} redacted]", min_length=1, max_length=100)

    @field_validator("patterns")
    @classmethod
    def _compile(cls, patterns: dict[str, str]) -> dict[str, str]:
        for label, pattern in patterns.items():
            if not label.strip():
                raise ValueError("a pattern's label must not be empty")
            try:
                compiled = re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"pattern {label!r} is not valid: {exc}") from exc
            if compiled.match(""):
                raise ValueError(f"pattern {label!r} matches the empty string")
        return patterns


def redact_text(text: str, config: OutputRedactionConfig) -> tuple[str, Counter[str]]:
    """``text`` with every match masked, and how many of each label were masked."""
    counts: Counter[str] = Counter()
    wanted = [DETECTORS[d] for d in DETECTORS if d in config.redact]
    wanted += [(label, re.compile(p)) for label, p in config.patterns.items()]
    for label, pattern in wanted:

        def mask(m: re.Match[str], label: str = label) -> str:
            if label == "card number" and not _luhn(m.group(0)):
                return m.group(0)
            counts[label] += 1
            return config.mask.replace("{label}", label)

        text = pattern.sub(mask, text)
    return text, counts


def _summary(counts: Counter[str]) -> str:
    return ", ".join(f"{n} {label}{'s' if n > 1 else ''}" for label, n in sorted(counts.items()))


class OutputRedaction(Guardrail[OutputRedactionConfig]):
    """Masks the model's text before anyone sees it: the chat, the session's history, the
    model span's output. While it is switched on the answer is not streamed (partial text
    would show before it is masked), and its callback span keeps what it returned, not the
    unmasked text it replaced.

    ``Agent(..., after_model_callback=OutputRedaction(policy).after_model)``
    """

    kind = "output_redaction"
    summary = (
        "What is masked in a model's answers: e-mail addresses, phone and card numbers, keys, "
        "your own patterns."
    )
    example: ClassVar[dict[str, Any]] = {
        "redact": ["email", "phone", "card", "key"],
        "patterns": {},
    }
    Config = OutputRedactionConfig
    unreadable = Decision.REDACTED

    def __init__(self, policy: Any = None, **kwargs: Any) -> None:
        super().__init__(policy, **kwargs)
        self.after_model = Hook(self.name, self._after_model, conceals=True, holds_stream=True)

    async def _after_model(
        self, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        content = llm_response.content
        parts = (content.parts or []) if content is not None else []
        if not any(p.text for p in parts):
            return None  # nothing to read: no decision to record
        read = await self.read(callback_context)
        if read is None:  # recorded as redacted: the whole answer is withheld
            text = "The answer was withheld: its redaction rules could not be read."
            return _with_parts(llm_response, [types.Part(text=text)])
        config, view = read
        if config is None:
            self.record(Decision.ALLOWED, "no redaction policy governs this agent", None)
            return None
        counts: Counter[str] = Counter()
        new_parts = []
        for part in parts:
            if part.text:
                masked, found = redact_text(part.text, config)
                counts += found
                part = part.model_copy(update={"text": masked})
            new_parts.append(part)
        if not counts:
            self.record(Decision.ALLOWED, "nothing to mask", view)
            return None
        self.record(Decision.REDACTED, f"masked {_summary(counts)}", view)
        return _with_parts(llm_response, new_parts)


def _with_parts(response: LlmResponse, parts: list[types.Part]) -> LlmResponse:
    content = types.Content(role="model", parts=parts)
    return response.model_copy(update={"content": content})
