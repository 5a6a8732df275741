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


class Hook:
    """A callable carrying a callback name, for hooks made from bound methods (which cannot
    carry one), e.g. the ``before_model`` of a guardrail object.

    ``conceals``: the callback's span does not record what its return replaced (a redactor's
    replaced response is the text it exists to hide). ``holds_stream``: while this
    ``after_model`` callback is switched on, the model's partial responses are not streamed,
    so nothing it would change reaches a client before it has run.
    """

    __slots__ = ("__agentdash_callback_name__", "_fn", "conceals", "holds_stream")

    def __init__(
        self,
        name: str,
        fn: Callable[..., Any],
        *,
        conceals: bool = False,
        holds_stream: bool = False,
    ) -> None:
        if not name or not name.strip():
            raise ValueError("a callback name must not be empty")
        self.__agentdash_callback_name__ = name
        self._fn = fn
        self.conceals = conceals
        self.holds_stream = holds_stream

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Hook({self.__agentdash_callback_name__!r})"
