"""Whom a tool acts as: ADK's safety guide, "Identity" (agent-auth and user-auth).

A tool acts either as the agent, with the service's own identity (``AGENT``, the default:
the same for every user, so a tool using it must itself decide what each user may reach), or
as the user chatting with the agent (``USER``: what it reaches is what that user may reach).
A tool declares which with ``identity=`` or, for a plain function, with :func:`acts_as`;
``ToolContext.principal`` names the one the running tool acts as, and its span records it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeVar, cast

# The service identity a runner is given by default belongs to the invocation; named here too.
from runtime.contexts.invocation_context import (
    DEFAULT_SERVICE_IDENTITY as DEFAULT_SERVICE_IDENTITY,
)

Identity = Literal["agent", "user"]

AGENT: Final = "agent"
"""The tool acts as the agent, with the service identity (``Runner(service_identity=)``)."""
USER: Final = "user"
"""The tool acts as the user who owns the session."""
IDENTITIES: Final = (AGENT, USER)

_MARK = "__agentdash_acts_as__"

F = TypeVar("F", bound=Callable[..., Any])


def checked_identity(kind: object) -> Identity:
    """``kind`` if it is ``"agent"`` or ``"user"``; else ``ValueError`` saying so."""
    if not isinstance(kind, str) or kind not in IDENTITIES:
        raise ValueError(
            f"a tool acts as {AGENT!r} (the agent's service identity) or {USER!r} (the user "
            f"chatting with it), not {kind!r}"
        )
    return cast(Identity, kind)


@dataclass(frozen=True)
class Principal:
    """Who a call acts as: ``kind`` ``"agent"`` or ``"user"``, and that one's ``id`` (the
    service identity, or the session owner's user id)."""

    kind: Identity
    id: str

    def __post_init__(self) -> None:
        checked_identity(self.kind)


def acts_as(kind: Identity) -> Callable[[F], F]:
    """Declare whom the decorated tool function acts as: ``@acts_as("user")`` makes the
    :class:`FunctionTool` built from it a user tool (``identity=`` on the tool wins).

    Raises ``ValueError`` at once for any ``kind`` other than ``"agent"`` or ``"user"``
    (including ``@acts_as`` used without its argument).
    """
    if callable(kind):
        raise ValueError(
            'acts_as needs the identity: write @acts_as("user") or @acts_as("agent"), '
            "not a bare @acts_as"
        )
    checked = checked_identity(kind)

    def mark(func: F) -> F:
        setattr(func, _MARK, checked)
        return func

    return mark


def declared_identity(func: Callable[..., Any]) -> Identity | None:
    """What :func:`acts_as` declared on ``func`` (or on a bound method's function), or
    ``None`` when nothing was."""
    found = getattr(func, _MARK, None)
    return None if found is None else checked_identity(found)
