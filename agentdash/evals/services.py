"""The writes of evals: an eval set imported from a file, a session kept as a case of one,
and a run of a set started (executed by :mod:`agentdash.evals.runner`). Each is audited."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from google.genai import types

from agentdash.agent_sessions.models import AgentSession
from agentdash.core.hygiene import JsonTooDeep, json_loads_strict, value_problem
from agentdash.core.services import audit_record
from agentdash.evals.models import EvalCaseResult, EvalRun, EvalSetRecord
from agentdash.evals.selectors import eval_set_of, session_event_list, session_initial_state
from agentdash.registry.loader import AgentNotRegisteredError
from agentdash.registry.selectors import agent_get
from runtime.evaluation import (
    DEFAULT_CRITERIA,
    EvalCase,
    EvalSet,
    EvalSetFormatError,
    criteria_from,
    eval_case_from_events,
    eval_set_data,
    eval_set_load,
)
from runtime.evaluation.eval_case import Invocation

MAX_FILE_BYTES = 2 * 1024 * 1024
"""The largest eval-set file taken (a set of hundreds of long conversations is far less)."""
TARGET = "evals.evalsetrecord"
RUN_TARGET = "evals.evalrun"
_ID_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def eval_set_parse(raw: bytes | str, *, eval_set_id: str = "") -> EvalSet:
    """An eval set from a file's content (ADK's schema or its older test format). Raises
    ``ValidationError`` (key ``file``) saying why for anything else: too large, not UTF-8,
    not JSON, too deep, a NUL or lone surrogate, a non-finite number, not ADK's format."""
    if len(raw) > MAX_FILE_BYTES:
        raise _bad("file", f"the file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB")
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        data = json_loads_strict(text)
    except UnicodeDecodeError:
        raise _bad("file", "the file is not UTF-8 text") from None
    except JsonTooDeep as exc:
        raise _bad("file", f"the file's JSON is {exc}") from None
    except ValueError as exc:  # JSONDecodeError, NaN/Infinity, an integer too long
        raise _bad("file", f"the file is not valid JSON: {exc}") from None
    problem = value_problem(data)
    if problem:
        raise _bad("file", f"the file cannot be stored: {problem}")
    try:
        found = eval_set_load(data, eval_set_id=eval_set_id)
    except EvalSetFormatError as exc:
        raise _bad("file", str(exc)) from None
    if not found.eval_set_id.strip() or len(found.eval_set_id) > 128:
        raise _bad("file", "the eval set's eval_set_id is 1 to 128 characters")
    return found


def eval_set_import(
    *, eval_set: EvalSet, actor: Any, agent_name: str = "", replace: bool = False
) -> tuple[EvalSetRecord, bool]:
    """Store ``eval_set`` (audited ``evalset.import``); the record, and whether anything
    was written. An eval set of that id stored with the same content (a file downloaded
    from here, imported again) is kept as it is — only ``agent_name``, when given, is set —
    so ``False`` when that changes nothing. One stored with other content is replaced when
    ``replace``; otherwise ``ValidationError`` (key ``file``) saying so."""
    data = eval_set_data(eval_set)
    problem = value_problem(data)
    if problem:
        raise _bad("file", f"the eval set cannot be stored: {problem}")
    fields = {
        "name": (eval_set.name or "")[:200],
        "description": eval_set.description or "",
        "case_count": len(eval_set.eval_cases),
        "data": data,
    }
    with transaction.atomic():
        record = (
            EvalSetRecord.objects.select_for_update()
            .filter(eval_set_id=eval_set.eval_set_id)
            .first()
        )
        if record is not None and record.data == data:
            return record, _agent_set(record, agent_name=agent_name, actor=actor)
        if record is not None and not replace:
            raise _bad(
                "file",
                f"an eval set {eval_set.eval_set_id!r} is stored already with other content: "
                "replace it, or change the file's eval_set_id",
            )
        before = None if record is None else {"case_count": record.case_count}
        if record is None:
            record = EvalSetRecord.objects.create(
                eval_set_id=eval_set.eval_set_id[:128],
                agent_name=agent_name,
                created_by=_user(actor),
                **fields,
            )
        else:
            for name, value in fields.items():
                setattr(record, name, value)
            record.agent_name = agent_name or record.agent_name
            record.save()
        audit_record(
            actor=actor,
            action="evalset.import",
            target_type=TARGET,
            target_id=str(record.pk),
            before=before,
            after={"eval_set_id": record.eval_set_id, "case_count": record.case_count},
        )
    return record, True


def _agent_set(record: EvalSetRecord, *, agent_name: str, actor: Any) -> bool:
    """Give ``record`` the default agent ``agent_name`` (audited); ``False`` when it is
    empty or the record's already."""
    if not agent_name or agent_name == record.agent_name:
        return False
    before = {"agent_name": record.agent_name}
    record.agent_name = agent_name
    record.save(update_fields=["agent_name", "updated_at"])
    audit_record(
        actor=actor,
        action="evalset.import",
        target_type=TARGET,
        target_id=str(record.pk),
        before=before,
        after={"agent_name": agent_name},
    )
    return True


def eval_case_save(
    *, session: AgentSession, eval_set_id: str, eval_id: str = "", actor: Any
) -> tuple[EvalSetRecord, bool]:
    """Keep ``session``'s conversation as eval case ``eval_id`` (default: from the
    session's title or id) of eval set ``eval_set_id``, made if there is none (its agent:
    the session's). A case of that id in the set is replaced. Returns the set and whether a
    case was replaced. Audited ``evalset.case_save``. Raises ``ValidationError`` (keys
    ``eval_set_id``, ``eval_id``, ``session``) for blank or unusable names or a session
    with no user message."""
    eval_set_id = _clean_id(eval_set_id, "eval_set_id")
    eval_id = _clean_id(eval_id or session.title or session.id, "eval_id")
    events = session_event_list(session_id=session.id)
    case = eval_case_from_events(
        eval_id=eval_id,
        events=events,
        app_name=session.app_name,
        user_id=session.user_id,
        state=session_initial_state(session=session, events=events),
    )
    if not case.conversation:
        raise _bad("session", "this session has no message from its user yet: nothing to keep")
    return _case_put(eval_set_id=eval_set_id, case=case, agent_name=session.app_name,
                     actor=actor, said={"session": session.id})  # fmt: skip


def eval_case_save_turn(
    *, eval_set_id: str, eval_id: str, agent_name: str, user_content: types.Content,
    expected: types.Content, actor: Any, said: dict[str, Any],
) -> tuple[EvalSetRecord, bool]:  # fmt: skip
    """Keep one turn — the user's message and the answer expected to it — as eval case
    ``eval_id`` of eval set ``eval_set_id`` (made if there is none, its agent
    ``agent_name``). ``said``: what the audit entry adds (where the turn came from). Errors
    as :func:`eval_case_save`'s."""
    eval_set_id = _clean_id(eval_set_id, "eval_set_id")
    eval_id = _clean_id(eval_id, "eval_id")
    turn = Invocation(invocation_id=f"e-{eval_id}", user_content=user_content,
                      final_response=expected)  # fmt: skip
    case = EvalCase(eval_id=eval_id, conversation=[turn])
    return _case_put(eval_set_id=eval_set_id, case=case, agent_name=agent_name, actor=actor,
                     said=said)  # fmt: skip


def _case_put(
    *, eval_set_id: str, case: EvalCase, agent_name: str, actor: Any, said: dict[str, Any]
) -> tuple[EvalSetRecord, bool]:
    """Put ``case`` into the set (replacing a case of its id), making the set if needed;
    audited ``evalset.case_save``."""
    eval_id = case.eval_id
    with transaction.atomic():
        record = EvalSetRecord.objects.select_for_update().filter(eval_set_id=eval_set_id).first()
        if record is None:
            current = EvalSet(eval_set_id=eval_set_id, name=eval_set_id, eval_cases=[])
        else:
            current = eval_set_of(record=record)
        kept = [c for c in current.eval_cases if c.eval_id != eval_id]
        replaced = len(kept) != len(current.eval_cases)
        current.eval_cases = [*kept, case]
        data = eval_set_data(current)
        problem = value_problem(data)
        if problem:
            raise _bad("session", f"this cannot be kept as a case: {problem}")
        if record is None:
            record = EvalSetRecord.objects.create(
                eval_set_id=eval_set_id,
                name=eval_set_id,
                agent_name=agent_name,
                case_count=len(current.eval_cases),
                data=data,
                created_by=_user(actor),
            )
        else:
            record.data, record.case_count = data, len(current.eval_cases)
            record.save(update_fields=["data", "case_count", "updated_at"])
        audit_record(
            actor=actor,
            action="evalset.case_save",
            target_type=TARGET,
            target_id=str(record.pk),
            after={"eval_id": eval_id, **said, "replaced": replaced},
        )
    return record, replaced


def criteria_clean(data: Mapping[str, Any] | None) -> dict[str, float]:
    """Thresholds by criterion (ADK's defaults for ``None``); ``ValidationError`` (key
    ``criteria``) when they are not ADK's two offline criteria with thresholds in [0, 1]."""
    if data is None:
        return dict(DEFAULT_CRITERIA)
    try:
        return criteria_from(data)
    except ValueError as exc:
        raise _bad("criteria", str(exc)) from None


Dispatch = Callable[[int], None]


def eval_run_create(
    *,
    record: EvalSetRecord,
    actor: Any,
    agent_name: str = "",
    criteria: Mapping[str, float] | None = None,
    dispatch: Dispatch | None = None,
) -> EvalRun:
    """A run of every case of ``record`` against ``agent_name`` (default: the set's agent,
    else its first case's app), one ``pending`` result per case, audited
    ``evalset.run``; once committed, ``dispatch(run_id)`` executes it (the runner's
    background thread when ``None``; the management command runs it itself). Raises
    ``ValidationError`` (``agent_name``, ``criteria``, ``eval_set``) for an agent not
    configured, bad criteria or a set with no case to run."""
    eval_set = eval_set_of(record=record)
    name = agent_name or record.agent_name or _first_app(eval_set)
    if not name:
        raise _bad("agent_name", "name the agent to run the cases against")
    try:
        agent_get(name=name)
    except AgentNotRegisteredError as exc:
        raise _bad("agent_name", str(exc)) from None
    thresholds = criteria_clean(criteria)
    if not eval_set.eval_cases:
        raise _bad("eval_set", "this eval set has no case to run")
    with transaction.atomic():
        eval_run = EvalRun.objects.create(
            eval_set=record, agent_name=name, criteria=thresholds, started_by=_user(actor)
        )
        EvalCaseResult.objects.bulk_create(
            EvalCaseResult(eval_run=eval_run, position=n, eval_id=case.eval_id[:200])
            for n, case in enumerate(eval_set.eval_cases)
        )
        audit_record(
            actor=actor,
            action="evalset.run",
            target_type=RUN_TARGET,
            target_id=str(eval_run.pk),
            after={"eval_set": record.eval_set_id, "agent": name, "criteria": thresholds},
        )
        if dispatch is not None:
            run_id = eval_run.pk
            transaction.on_commit(lambda: dispatch(run_id))
    return eval_run


def eval_file_name(record: EvalSetRecord) -> str:
    """``<eval_set_id>.evalset.json``, with what a file name cannot hold replaced."""
    return (_ID_UNSAFE.sub("_", record.eval_set_id).strip("._") or "eval_set") + ".evalset.json"


def eval_set_text(record: EvalSetRecord) -> str:
    return json.dumps(record.data, indent=2, ensure_ascii=False) + "\n"


def _first_app(eval_set: EvalSet) -> str:
    for case in eval_set.eval_cases:
        if case.session_input is not None and case.session_input.app_name:
            return case.session_input.app_name
    return ""


def _clean_id(value: str, key: str) -> str:
    value = (value or "").strip()
    if not value:
        raise _bad(key, "give it a name")
    if len(value) > 128:
        raise _bad(key, "at most 128 characters")
    problem = value_problem(value)
    if problem:
        raise _bad(key, problem)
    return value


def _bad(key: str, message: str) -> ValidationError:
    return ValidationError({key: [message]})


def _user(actor: Any) -> Any:
    return actor if getattr(actor, "is_authenticated", False) else None
