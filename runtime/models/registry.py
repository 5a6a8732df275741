"""Model strings to model objects: ``"offline"``, ``"gemini-…"``, or registered classes."""

from __future__ import annotations

import re

from runtime.errors import ModelNotFoundError
from runtime.models.base_llm import BaseLlm

_registry: list[tuple[re.Pattern[str], type[BaseLlm]]] = []


def register(cls: type[BaseLlm]) -> type[BaseLlm]:
    """Make ``cls`` serve the model names matching its ``supported_models()`` patterns."""
    for pattern in cls.supported_models():
        _registry.append((re.compile(pattern), cls))
    return cls


def _builtin() -> None:
    if _registry:
        return
    from runtime.models.gemini import Gemini
    from runtime.models.offline_llm import OfflineLlm

    register(OfflineLlm)
    register(Gemini)


def resolve(model: str | BaseLlm) -> BaseLlm:
    """An instance for ``model``; a :class:`BaseLlm` is returned as it is.

    Raises :class:`ModelNotFoundError` naming the known patterns when nothing matches.
    """
    if isinstance(model, BaseLlm):
        return model
    if not isinstance(model, str):
        raise TypeError(f"model must be a model name or a BaseLlm, got {model!r}")
    _builtin()
    for pattern, cls in reversed(_registry):
        if pattern.fullmatch(model):
            return cls(model=model)
    known = ", ".join(p.pattern for p, _ in _registry)
    raise ModelNotFoundError(f"no model class serves {model!r}; known patterns: {known}")
