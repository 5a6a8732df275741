"""Model strings to model objects: ``"offline"``, ``"gemini-…"``, or registered classes."""

from __future__ import annotations

import re

from runtime.errors import ModelNotFoundError
from runtime.models.base_llm import BaseLlm

_registry: list[tuple[re.Pattern[str], type[BaseLlm]]] = []
_builtins_loaded = False


def register(cls: type[BaseLlm]) -> type[BaseLlm]:
    """Make ``cls`` serve the model names matching its ``supported_models()`` patterns (a
    class registered later wins over earlier ones, the built-in ones included)."""
    for pattern in cls.supported_models():
        _registry.append((re.compile(pattern), cls))
    return cls


def _builtin() -> None:
    """The built-in classes, first in the list (so that any registered class wins), loaded
    once — whether or not classes were registered before."""
    global _builtins_loaded
    if _builtins_loaded:
        return
    from runtime.models.gemini import Gemini
    from runtime.models.offline_llm import OfflineLlm

    builtins = [
        (re.compile(p), cls) for cls in (OfflineLlm, Gemini) for p in cls.supported_models()
    ]
    _registry[:0] = builtins
    _builtins_loaded = True


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
