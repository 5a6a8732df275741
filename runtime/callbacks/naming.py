"""Stable callback names: what operators switch on and off."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_ATTR = "__agentdash_callback_name__"


def named(name: str) -> Callable[[F], F]:
    """Give a callback an explicit, stable name (decorator)::

    @named("pii-guard")
    def before_model(callback_context, llm_request): ...
    """
    if not name or not name.strip():
        raise ValueError("a callback name must not be empty")

    def decorate(fn: F) -> F:
        try:
            setattr(fn, _ATTR, name)
        except AttributeError:  # bound methods and builtins refuse attributes
            wrapper = functools.wraps(fn)(lambda *a, **k: fn(*a, **k))
            setattr(wrapper, _ATTR, name)
            return wrapper  # type: ignore[return-value]
        return fn

    return decorate


def callback_name(obj: Any) -> str:
    """The name a callback is known by.

    An explicit name (:func:`named`, or a ``name`` string attribute on an any-agent
    ``Callback`` instance) wins; then a function's qualified name; then the class's qualified
    name for callable objects and ``Callback`` instances. Names of functions defined inside
    other functions drop the enclosing function (``make_guard.<locals>.guard`` → ``guard``).
    """
    explicit = getattr(obj, _ATTR, None)
    if isinstance(explicit, str):
        return explicit
    if isinstance(obj, functools.partial):
        return callback_name(obj.func)
    qualname = getattr(obj, "__qualname__", None)
    if isinstance(qualname, str) and not isinstance(obj, type):
        return qualname.rsplit("<locals>.", 1)[-1]
    own = getattr(obj, "name", None)
    if isinstance(own, str) and own:
        return own
    return type(obj).__qualname__.rsplit("<locals>.", 1)[-1]
