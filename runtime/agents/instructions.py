"""Instruction templating: ``{key}`` references filled from session state; and the versioned
instruction a provider may give (:class:`InstructionView`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from runtime.errors import MissingStateKeyError
from runtime.sessions.state import State

if TYPE_CHECKING:
    from runtime.contexts.readonly_context import ReadonlyContext


@dataclass(frozen=True)
class InstructionView:
    """What an instruction provider may return instead of text: a template kept somewhere
    that changes while agents run (AgentDash's stored instructions), and which version of it
    this is. Unlike a provider's plain text, ``template`` is filled from state as a string
    instruction is; ``version`` is written on the model call's span
    (``agentdash.instruction.version``), so a trace says which instruction a call was given."""

    template: str
    version: str


_REFERENCE = re.compile(r"{+[^{}]*}+")
_PREFIXES = (State.APP_PREFIX, State.USER_PREFIX, State.TEMP_PREFIX)


def _is_state_name(name: str) -> bool:
    for prefix in _PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix) :].isidentifier()
    return name.isidentifier()


async def inject_session_state(template: str, readonly_context: ReadonlyContext) -> str:
    """Fill ``template``'s ``{...}`` references from the session.

    ``{key}`` and ``{app:key}``/``{user:key}``/``{temp:key}`` take the state value (a missing
    key raises :class:`MissingStateKeyError` naming it); ``{key?}`` gives ``""`` when missing;
    ``{artifact.name}`` inserts the text of the session's artifact ``name``. Braces around
    anything that is not such a name (JSON, code) are left as they are, and so is a doubled
    ``{{name}}``: the escape for literal braces, as ADK's documentation uses it.
    """
    ctx = readonly_context._invocation_context
    state = ctx.session.state
    out: list[str] = []
    last = 0
    for match in _REFERENCE.finditer(template):
        out.append(template[last : match.start()])
        last = match.end()
        raw = match.group()
        if raw.startswith("{{") and raw.endswith("}}"):
            out.append(raw)
            continue
        name = raw.lstrip("{").rstrip("}").strip()
        optional = name.endswith("?")
        if optional:
            name = name[:-1]
        if name.startswith("artifact."):
            filename = name[len("artifact.") :]
            service = ctx.artifact_service
            part = None
            if service is not None:
                part = await service.load_artifact(
                    app_name=ctx.app_name,
                    user_id=ctx.user_id,
                    session_id=ctx.session.id,
                    filename=filename,
                )
            if part is None:
                if optional:
                    out.append("")
                    continue
                raise MissingStateKeyError(
                    f"instruction of agent {ctx.agent.name!r} uses artifact {filename!r}, "
                    "which this session does not have"
                )
            out.append(part.text or "")
            continue
        if not _is_state_name(name):
            out.append(raw)
            continue
        if name in state:
            value = state[name]
            out.append("" if value is None else str(value))
        elif optional:
            out.append("")
        else:
            raise MissingStateKeyError(
                f"instruction of agent {ctx.agent.name!r} uses state key {name!r}, which the "
                f"session does not have; set it first or write {{{name}?}} to make it optional"
            )
    out.append(template[last:])
    return "".join(out)
