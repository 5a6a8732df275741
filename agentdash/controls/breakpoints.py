"""Operators' breakpoints: set and removed (validated, audited), and read by the worker at
every step of a run as the runtime's :class:`~runtime.debug.breakpoints.Breakpoints` (kept
by each run until one may have changed: ``breakpoint_watch``).

A breakpoint pauses a run the way a tool confirmation does (``runs.confirmations``): the run
is ``waiting``, holds no worker, and goes on when a person resumes, steps or cancels it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q

from agentdash.agent_sessions.models import AgentSession
from agentdash.controls import breakpoint_watch
from agentdash.controls.announce import breakpoints_announce_on_commit
from agentdash.controls.models import Breakpoint
from agentdash.controls.services import Actor
from agentdash.core.hygiene import text_problem
from agentdash.core.prepared import PreparedQuery
from agentdash.core.services import audit_record
from agentdash.core.threads import in_worker_thread
from runtime.debug.breakpoints import Breakpoints

if TYPE_CHECKING:
    from runtime.contexts.invocation_context import InvocationContext

BREAKPOINT_TARGET = "controls.breakpoint"


def _snapshot(point: Breakpoint) -> dict[str, Any]:
    return {
        "agent": point.agent_name,
        "session": point.session_id,
        "kind": point.kind,
        "tool": point.tool_name,
        "outcome": point.outcome,
    }


def breakpoint_add(
    *,
    agent_name: str,
    kind: str,
    tool_name: str = "",
    outcome: str = "",
    session_id: str | None = None,
    actor: Actor,
    reason: str = "",
) -> Breakpoint:
    """Add a breakpoint of ``agent_name`` (the agent, or the root agent of the runs it is
    in): ``before_tool`` (``tool_name``), ``before_model``, or ``callback_outcome``
    (``outcome``: raised or overridden); for one session or (``None``) every session.
    ``ValidationError`` for anything else; the same breakpoint twice is one."""
    errors: dict[str, list[str]] = {}
    for field, value, limit in (("agent_name", agent_name, 128), ("tool_name", tool_name, 255)):
        problem = text_problem(value) if isinstance(value, str) else "must be text"
        if problem or len(value) > limit:
            errors[field] = [problem or f"at most {limit} characters"]
    if not agent_name.strip():
        errors["agent_name"] = ["name the agent"]
    if kind not in Breakpoint.Kind.values:
        errors["kind"] = [f"one of {', '.join(Breakpoint.Kind.values)}"]
    if kind == Breakpoint.Kind.BEFORE_TOOL and not tool_name.strip():
        errors["tool_name"] = ["name the tool to stop before"]
    if kind == Breakpoint.Kind.CALLBACK_OUTCOME and outcome not in Breakpoint.Outcome.values:
        errors["outcome"] = [f"one of {', '.join(Breakpoint.Outcome.values)}"]
    if session_id is not None and not AgentSession.objects.filter(pk=session_id).exists():
        errors["session"] = ["no such session"]
    if errors:
        raise ValidationError(errors)
    fields: dict[str, Any] = {
        "agent_name": agent_name.strip(),
        "session_id": session_id,
        "kind": kind,
        "tool_name": tool_name.strip() if kind == Breakpoint.Kind.BEFORE_TOOL else "",
        "outcome": outcome if kind == Breakpoint.Kind.CALLBACK_OUTCOME else "",
    }
    with transaction.atomic():
        point, created = Breakpoint.objects.get_or_create(**fields)
        if created:
            breakpoints_announce_on_commit()
            audit_record(
                actor=actor,
                action="breakpoint.add",
                target_type=BREAKPOINT_TARGET,
                target_id=str(point.pk),
                before=None,
                after=_snapshot(point),
                reason=reason,
            )
    return point


def breakpoint_remove(*, point: Breakpoint, actor: Actor, reason: str = "") -> None:
    with transaction.atomic():
        breakpoints_announce_on_commit()
        audit_record(
            actor=actor,
            action="breakpoint.remove",
            target_type=BREAKPOINT_TARGET,
            target_id=str(point.pk),
            before=_snapshot(point),
            after=None,
            reason=reason,
        )
        point.delete()


_HOLDING: PreparedQuery[Breakpoint] = PreparedQuery(
    lambda agent_names: Breakpoint.objects.filter(agent_name__in=agent_names, enabled=True)
)
_HOLDING_IN: PreparedQuery[Breakpoint] = PreparedQuery(
    lambda agent_names, session_id: Breakpoint.objects.filter(
        Q(session__isnull=True) | Q(session_id=session_id),
        agent_name__in=agent_names,
        enabled=True,
    )
)


def breakpoints_listed(*, agent_names: set[str], session_id: str | None) -> list[Breakpoint]:
    """The breakpoints that hold in ``session_id`` for these agents (every session's and
    that session's)."""
    names = sorted(agent_names)
    return _HOLDING_IN.rows(names, session_id) if session_id else _HOLDING.rows(names)


def breakpoints_for(*, agent_names: set[str], session_id: str) -> Breakpoints:
    """The runtime's view of :func:`breakpoints_listed` (the worker's source)."""
    rows = breakpoints_listed(agent_names=agent_names, session_id=session_id)
    return Breakpoints(
        before_tools=frozenset(r.tool_name for r in rows if r.kind == Breakpoint.Kind.BEFORE_TOOL),
        before_model=any(r.kind == Breakpoint.Kind.BEFORE_MODEL for r in rows),
        outcomes=frozenset(r.outcome for r in rows if r.kind == Breakpoint.Kind.CALLBACK_OUTCOME),
    )


class RunBreakpoints:
    """One run's breakpoint source (the runtime's ``BreakpointSource``): the step's agent's
    and its root agent's breakpoints in the run's session, as stored."""

    def __init__(self) -> None:
        self._kept: dict[tuple[frozenset[str], str], tuple[int, Breakpoints]] = {}

    def read_ahead(self, *, agent_name: str, session_id: str) -> None:
        """Read now (a sync read, in the thread that claimed the run) what the first step of
        root agent ``agent_name`` in ``session_id`` will ask for: kept like any read, so
        that step makes no thread hop of its own. Nothing is kept while no listener of this
        process hears the ``controls`` group (every step reads then)."""
        generation = breakpoint_watch.trusted_generation()
        if generation is None:
            return
        key = (frozenset({agent_name}), session_id)
        found = breakpoints_for(agent_names=set(key[0]), session_id=session_id)
        self._kept[key] = (generation, found)

    async def __call__(self, ctx: InvocationContext) -> Breakpoints:
        key = (frozenset({ctx.agent.name, ctx.agent.root_agent.name}), ctx.session.id)
        generation = (
            breakpoint_watch.trusted_generation()
        )  # before the read: a change during it reads again
        kept = self._kept.get(key)
        if generation is not None and kept is not None and kept[0] == generation:
            return kept[1]
        found = await in_worker_thread(breakpoints_for)(agent_names=set(key[0]), session_id=key[1])
        if generation is not None:
            self._kept[key] = (generation, found)
        return found
