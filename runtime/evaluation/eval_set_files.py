"""Reading and writing eval-set files as ``adk`` does (``*.evalset.json``, ``*.test.json``).

:func:`eval_set_load` takes ADK's schema (``EvalSet``) and, like ADK's
``load_eval_set_from_file``, falls back to the older list-of-dicts test format::

    [{"query": ..., "expected_tool_use": [{"tool_name": ..., "tool_input": {...}}],
      "reference": ...}, ...]                          # one conversation
    [{"name": ..., "data": [<turns as above>], "initial_session": {...}}, ...]  # several

:func:`eval_set_dump` writes ADK's form: snake_case names, two-space indent, absent values
left out (``adk`` reads them back as absent).
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from google.genai import types
from pydantic import ValidationError

from runtime.evaluation.eval_case import EvalCase, IntermediateData, Invocation, SessionInput
from runtime.evaluation.eval_set import EvalSet

EVAL_SET_SUFFIX = ".evalset.json"


class EvalSetFormatError(ValueError):
    """The data is neither an ADK eval set nor ADK's older test format; the message says
    where it went wrong (at most a few problems, each with its location)."""


def eval_set_load(data: Any, *, eval_set_id: str = "") -> EvalSet:
    """An :class:`EvalSet` from parsed JSON ``data`` (an object in ADK's schema, or a list in
    the older test format, whose set is named ``eval_set_id`` or a new uuid).

    Raises :class:`EvalSetFormatError` with a readable reason otherwise."""
    if isinstance(data, list):
        return _from_legacy(data, eval_set_id=eval_set_id or uuid.uuid4().hex)
    if not isinstance(data, dict):
        raise EvalSetFormatError(
            f"an eval set is a JSON object (or a list in ADK's older test format), not "
            f"{_json_type(data)}"
        )
    try:
        return EvalSet.model_validate(data)
    except ValidationError as exc:
        raise EvalSetFormatError(_explain(exc)) from None


def eval_set_loads(text: str | bytes, *, eval_set_id: str = "") -> EvalSet:
    """:func:`eval_set_load` of JSON text; invalid JSON is an :class:`EvalSetFormatError`."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise EvalSetFormatError(f"not valid JSON: {exc}") from None
    return eval_set_load(data, eval_set_id=eval_set_id)


def eval_set_data(eval_set: EvalSet) -> dict[str, Any]:
    """The eval set as JSON-ready data in ADK's form (snake_case, absent values left out)."""
    data: dict[str, Any] = eval_set.model_dump(mode="json", exclude_none=True)
    return data


def eval_set_dump(eval_set: EvalSet) -> str:
    """The eval set as the text of a ``.evalset.json`` file."""
    return json.dumps(eval_set_data(eval_set), indent=2, ensure_ascii=False) + "\n"


def _from_legacy(items: list[Any], *, eval_set_id: str) -> EvalSet:
    """ADK's ``convert_eval_set_to_pydanctic_schema`` and the single-conversation test file."""
    now = time.time()
    try:
        if all(isinstance(i, dict) and "data" in i for i in items) and items:
            cases = [
                EvalCase(
                    eval_id=str(item.get("name") or f"case_{n}"),
                    conversation=[_legacy_turn(t, now) for t in _list(item["data"], "data")],
                    session_input=_legacy_session(item.get("initial_session")),
                    creation_timestamp=now,
                )
                for n, item in enumerate(items, 1)
            ]
        else:
            turns = [_legacy_turn(t, now) for t in items]
            cases = [EvalCase(eval_id=eval_set_id, conversation=turns, creation_timestamp=now)]
    except ValidationError as exc:
        raise EvalSetFormatError(_explain(exc)) from None
    except (KeyError, TypeError, ValueError) as exc:
        raise EvalSetFormatError(f"not ADK's test format: {exc}") from None
    return EvalSet(
        eval_set_id=eval_set_id, name=eval_set_id, eval_cases=cases, creation_timestamp=now
    )


def _legacy_turn(turn: Any, now: float) -> Invocation:
    if not isinstance(turn, dict) or not isinstance(turn.get("query"), str):
        raise ValueError("each turn is an object with a 'query' string")
    uses = [
        types.FunctionCall(name=use["tool_name"], args=use.get("tool_input") or {})
        for use in _list(turn.get("expected_tool_use", []), "expected_tool_use")
    ]
    said = [
        (str(r["author"]), [types.Part(text=str(r["text"]))])
        for r in _list(
            turn.get("expected_intermediate_agent_responses", []),
            "expected_intermediate_agent_responses",
        )
    ]
    return Invocation(
        invocation_id=uuid.uuid4().hex,
        user_content=types.Content(role="user", parts=[types.Part(text=turn["query"])]),
        final_response=types.Content(
            role="model", parts=[types.Part(text=str(turn.get("reference", "")))]
        ),
        intermediate_data=IntermediateData(tool_uses=uses, intermediate_responses=said),
        creation_timestamp=now,
    )


def _legacy_session(found: Any) -> SessionInput | None:
    if not isinstance(found, dict) or not found:
        return None
    return SessionInput(
        app_name=str(found.get("app_name", "")),
        user_id=str(found.get("user_id", "")),
        state=found.get("state") or {},
    )


def _list(value: Any, name: str) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError(f"'{name}' is a list, not {_json_type(value)}")
    return value


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    for kind, name in names.items():
        if isinstance(value, kind):
            return name
    if value is None:
        return "null"
    return "a number" if isinstance(value, int | float) else type(value).__name__


def _explain(exc: ValidationError, limit: int = 3) -> str:
    problems = []
    for error in exc.errors(include_url=False)[:limit]:
        where = ".".join(str(p) for p in error["loc"]) or "(top)"
        problems.append(f"{where}: {error['msg']}")
    more = exc.error_count() - len(problems)
    tail = f" (and {more} more)" if more > 0 else ""
    return "not an ADK eval set: " + "; ".join(problems) + tail
