"""Changes to stored instructions: saving the next version, rolling back to an earlier one.
Operators only (``instructions.add_instructionversion``); every change audited, in the
transaction that makes it. A save names the version it started from: when someone saved
meanwhile, nothing is written (:class:`InstructionConflict`) and the editor keeps its text."""

from __future__ import annotations

import re
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction

from agentdash.core.hygiene import text_problem
from agentdash.core.services import audit_record
from agentdash.instructions.models import InstructionVersion
from agentdash.instructions.selectors import instruction_current, instruction_version_get

TEXT_MAX_CHARS = 50_000
REASON_MAX_CHARS = 500
AGENT_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
TARGET = "instructions.agent"
PERMISSION = "instructions.add_instructionversion"


class InstructionConflict(Exception):
    """Someone saved a version of the instruction after the editor read it."""

    def __init__(self, *, agent_name: str, expected: int, current: int) -> None:
        self.current = current
        super().__init__(
            f"The instruction of {agent_name} was changed by someone else while you were "
            f"editing it (you started from version {expected or 'code'}; it is now version "
            f"{current}). Nothing was saved: your text is kept below — compare it with the "
            "current one and save again."
        )


def instruction_snapshot(row: InstructionVersion | None) -> dict[str, Any] | None:
    """A version as the audit log keeps it."""
    if row is None:
        return None
    return {"agent": row.agent_name, "version": row.version, "text": row.text,
            "reason": row.reason, "rollback_of": row.rollback_of}  # fmt: skip


def instruction_check(*, agent_name: str, text: Any, reason: Any = "") -> tuple[str, str]:
    """The text and reason as they would be stored; ``ValidationError`` naming the field."""
    if not isinstance(agent_name, str) or not AGENT_NAME.match(agent_name):
        raise ValidationError({"agent": ["not an agent's name"]})
    if not isinstance(text, str) or not text.strip():
        raise ValidationError({"text": ["an instruction cannot be empty"]})
    if len(text) > TEXT_MAX_CHARS:
        raise ValidationError({"text": [f"at most {TEXT_MAX_CHARS:,} characters"]})
    problem = text_problem(text)
    if problem:
        raise ValidationError({"text": [problem]})
    reason = reason if isinstance(reason, str) else ""
    if len(reason) > REASON_MAX_CHARS:
        raise ValidationError({"reason": [f"at most {REASON_MAX_CHARS} characters"]})
    problem = text_problem(reason)
    if problem:
        raise ValidationError({"reason": [problem]})
    return text.replace("\r\n", "\n"), reason.strip()


def instruction_save(
    *, agent_name: str, text: Any, reason: Any = "", actor: Any, expected_version: int,
    rollback_of: int | None = None,
) -> InstructionVersion:  # fmt: skip
    """Store ``text`` as the next version of ``agent_name``'s instruction, if the current
    version is still ``expected_version`` (0: none stored yet). ``PermissionDenied`` for
    someone who is not an operator, ``ValidationError`` for a text or reason that cannot be
    stored or that changes nothing, :class:`InstructionConflict` when someone saved first.
    Audited ``instruction.save`` (``instruction.rollback`` with ``rollback_of``)."""
    if not getattr(actor, "is_authenticated", False) or not actor.has_perm(PERMISSION):
        raise PermissionDenied("only operators change agents' instructions")
    text, reason = instruction_check(agent_name=agent_name, text=text, reason=reason)
    try:
        with transaction.atomic():
            before = instruction_current(agent_name=agent_name)
            current = before.version if before else 0
            if current != expected_version:
                raise InstructionConflict(
                    agent_name=agent_name, expected=expected_version, current=current
                )
            if before is not None and before.text == text:
                raise ValidationError({"text": ["this is the current instruction already"]})
            row = InstructionVersion.objects.create(
                agent_name=agent_name, version=current + 1, text=text, reason=reason,
                rollback_of=rollback_of, author=actor, author_name=actor.get_username(),
            )  # fmt: skip
            audit_record(
                actor=actor,
                action="instruction.rollback" if rollback_of is not None else "instruction.save",
                target_type=TARGET, target_id=agent_name,
                before=instruction_snapshot(before), after=instruction_snapshot(row),
                reason=reason,
            )  # fmt: skip
    except IntegrityError:  # another save took the same version number first
        now = instruction_current(agent_name=agent_name)
        raise InstructionConflict(
            agent_name=agent_name, expected=expected_version, current=now.version if now else 0
        ) from None
    return row


def instruction_rollback(
    *, agent_name: str, to_version: int, code_text: str, actor: Any, expected_version: int,
    reason: str = "",
) -> InstructionVersion:  # fmt: skip
    """Make the text of version ``to_version`` (0: ``code_text``, the one in the agent's
    code) current again, as the next version. Errors as :func:`instruction_save`'s; a
    version that does not exist is a ``ValidationError``."""
    if to_version == 0:
        text = code_text
    else:
        found = instruction_version_get(agent_name=agent_name, version=to_version)
        if found is None:
            raise ValidationError({"version": [f"{agent_name} has no version {to_version}"]})
        text = found.text
    said = reason or f"rolled back to {'the code' if to_version == 0 else f'v{to_version}'}"
    return instruction_save(
        agent_name=agent_name, text=text, reason=said, actor=actor,
        expected_version=expected_version, rollback_of=to_version,
    )  # fmt: skip
