"""Where a guardrail's rules come from, and how its decisions are recorded.

A guardrail reads its policy each time it runs, from ``policy=``: a fixed config (a mapping),
``None`` (the guardrail's ``default``), or a *source* — a function of the callback's context
returning a :class:`PolicyView`, a mapping or ``None``, or an awaitable of one. A source is
how a host keeps policies somewhere an operator edits them (AgentDash: the ``controls``
app's ``Policy`` rows); the next step of a running agent obeys an edit.

A policy that cannot be read, or does not validate, never widens what is allowed: the
guardrail fails closed (blocks, withholds, stops) and says why.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from opentelemetry import trace
from pydantic import BaseModel, ValidationError

from runtime.contexts.readonly_context import ReadonlyContext
from runtime.telemetry.attributes import Decision
from runtime.telemetry.decisions import decision_write

__all__ = [
    "Guardrail",
    "PolicySource",
    "PolicyUnavailableError",
    "PolicyView",
    "config_problems",
    "record_decision",
]


@dataclass(frozen=True)
class PolicyView:
    """A policy as a guardrail reads it: its config, and (for the span) its name and version."""

    config: Mapping[str, Any] = field(default_factory=dict)
    name: str = ""
    version: int | None = None

    @property
    def label(self) -> str:
        if not self.name:
            return ""
        return self.name if self.version is None else f"{self.name}@{self.version}"


PolicyValue = PolicyView | Mapping[str, Any] | None
PolicySource = Callable[[ReadonlyContext], PolicyValue | Awaitable[PolicyValue]]


class PolicyUnavailableError(RuntimeError):
    """The policy could not be read, or its config is not valid for the guardrail."""


def config_problems(exc: ValidationError) -> str:
    """A pydantic error as one line: ``path: message; …`` (paths like ``tools.search``)."""
    parts = []
    for error in exc.errors():
        path = ".".join(str(p) for p in error["loc"]) or "config"
        parts.append(f"{path}: {error['msg']}")
    return "; ".join(parts)


def record_decision(
    decision: str, reason: str, *, guardrail: str, policy: PolicyView | None = None
) -> None:
    """Write a decision on the current span (the guardrail's callback span)."""
    label = policy.label if policy is not None else ""
    decision_write(trace.get_current_span(), decision, reason, guardrail=guardrail, policy=label)


C = TypeVar("C", bound=BaseModel)


class Guardrail(Generic[C]):
    """What every guardrail shares: a name (its switchboard name and the callback name of
    each of its hooks), a policy read at call time and validated into ``Config``."""

    kind: ClassVar[str]
    """The policy kind it reads (``controls.Policy.kind``), one per guardrail class."""
    Config: ClassVar[type[BaseModel]]
    summary: ClassVar[str]
    """What its policy governs, in a sentence (the policy editor shows it)."""
    example: ClassVar[dict[str, Any]]
    """A valid config (the policy editor starts from it)."""
    unreadable: ClassVar[str] = Decision.BLOCKED
    """The decision recorded when the policy cannot be read (the guardrail then refuses)."""

    def __init__(
        self,
        policy: PolicySource | Mapping[str, Any] | None = None,
        *,
        name: str | None = None,
        default: Mapping[str, Any] | None = None,
    ) -> None:
        if policy is not None and not (callable(policy) or isinstance(policy, Mapping)):
            raise TypeError(
                f"policy must be a mapping, a function of the context or None, not "
                f"{type(policy).__name__}"
            )
        self.name = name or self.kind.replace("_", "-")
        self._source = policy
        self._default = dict(default) if default is not None else None
        if isinstance(policy, Mapping):  # a fixed config is checked once, now
            self.Config.model_validate(dict(policy))
        if self._default is not None:
            self.Config.model_validate(self._default)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"

    async def policy(self, ctx: ReadonlyContext) -> tuple[C | None, PolicyView | None]:
        """``(config, view)`` now; ``(None, None)`` when no policy and no default apply.

        Raises :class:`PolicyUnavailableError` when the source fails or the config is invalid.
        """
        source = self._source
        try:
            value: Any = source(ctx) if callable(source) else source
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:
            raise PolicyUnavailableError(
                f"the {self.kind} policy could not be read: {type(exc).__name__}: {exc}"
            ) from exc
        if value is None:
            if self._default is None:
                return None, None
            value = PolicyView(config=self._default, name="default")
        view = value if isinstance(value, PolicyView) else PolicyView(config=value)
        try:
            config = self.Config.model_validate(dict(view.config))
        except ValidationError as exc:
            label = view.label or "policy"
            raise PolicyUnavailableError(
                f"the {self.kind} policy {label} is invalid: {config_problems(exc)}"
            ) from exc
        return config, view  # type: ignore[return-value]

    async def read(self, ctx: ReadonlyContext) -> tuple[C | None, PolicyView | None] | None:
        """:meth:`policy`, or ``None`` when it cannot be read — that failure recorded as
        :attr:`unreadable` with its reason, for the caller to refuse (fail closed)."""
        try:
            return await self.policy(ctx)
        except PolicyUnavailableError as exc:
            self.record(self.unreadable, str(exc), None)
            return None

    def record(self, decision: str, reason: str, view: PolicyView | None) -> None:
        record_decision(decision, reason, guardrail=self.name, policy=view)
