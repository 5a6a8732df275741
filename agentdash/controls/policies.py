"""Policy kinds and their config schemas: the runtime's, so a stored policy is one the
runtime accepts.

The kinds are built from ``runtime.guardrails.kinds`` (each guardrail's kind and config
model, and the query tool's ``QueryPolicy``); a config is validated by that model and every
problem it finds is reported under its path (``config.tables[1]``,
``config.tools.search.patterns.q``) in the editor's words. A host may register a kind of its
own (:func:`policy_kind_register`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from django.core.exceptions import ValidationError
from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from agentdash.core.hygiene import value_problem
from runtime.guardrails.kinds import policy_kind_specs

__all__ = [
    "POLICY_KINDS",
    "PolicyKind",
    "PolicyProblems",
    "policy_kind_register",
    "policy_validate",
]


class PolicyProblems:
    """Collects messages per path; raises them all at once as a field-keyed ValidationError."""

    def __init__(self) -> None:
        self.by_path: dict[str, list[str]] = {}

    def add(self, path: str, message: str) -> None:
        self.by_path.setdefault(path, []).append(message)

    def raise_if_any(self) -> None:
        if self.by_path:
            raise ValidationError(
                {
                    path: [ValidationError(message, code="invalid") for message in messages]
                    for path, messages in self.by_path.items()
                }
            )


def _type_name(value: Any) -> str:
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def _path(loc: tuple[Any, ...]) -> str:
    """A pydantic error location as a config path: ``config.tools.search``, ``config.x[1]``."""
    out = "config"
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The config model holding the key at ``loc`` (a nested rule set's, for a key inside
    it), or ``None`` where the path leaves the models."""
    current: Any = model
    for part in loc[:-1]:
        while get_origin(current) in (Annotated, Union, UnionType):
            args = [a for a in get_args(current) if a is not type(None)]
            current = args[0] if args else None
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(str(part))
            current = field.annotation if field is not None else None
        elif get_origin(current) in (dict, list):
            current = get_args(current)[-1]
        else:
            return None
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _message(model: type[BaseModel], error: Any) -> str:
    """A pydantic error said the way the policy editor says every problem."""
    kind = error["type"]
    context = error.get("ctx") or {}
    if kind == "missing":
        return "This key is required."
    if kind == "extra_forbidden":
        holder = _model_at(model, tuple(error["loc"]))
        allowed = f" Allowed keys: {', '.join(sorted(holder.model_fields))}." if holder else ""
        return f"Unknown key.{allowed}"
    if kind in _EXPECTED:
        return f"must be {_EXPECTED[kind]}, not {_type_name(error['input'])}."
    if kind == "greater_than_equal":
        return f"must be at least {context['ge']}."
    if kind in ("too_short", "string_too_short"):
        return "must not be empty."
    return f"{error['msg'].removeprefix('Value error, ')}."


_EXPECTED = {
    "bool_type": "a boolean",
    "int_type": "an integer",
    "float_type": "a number",
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
}


def _validate_with(model: type[BaseModel]) -> Callable[[Any, PolicyProblems], dict[str, Any]]:
    """A validator from the runtime's config model for the kind: the config the runtime
    accepts is exactly the one stored; every problem reported under its path."""

    def validate(config: Any, problems: PolicyProblems) -> dict[str, Any]:
        if not isinstance(config, dict):
            problems.add("config", f"must be an object, not {_type_name(config)}.")
            return {}
        try:
            return model.model_validate(config).model_dump(mode="json")
        except PydanticValidationError as exc:
            for error in exc.errors():
                loc = tuple(part for part in error["loc"] if part != "[key]")
                problems.add(_path(loc), _message(model, error))
            return {}

    return validate


@dataclass(frozen=True)
class PolicyKind:
    """A kind of policy: its name, what it governs, and its config validator.

    ``validate(config, problems)`` returns the cleaned config; it reports problems through
    ``problems.add(path, message)`` and must not raise for bad input.
    """

    name: str
    description: str
    validate: Callable[[Any, PolicyProblems], dict[str, Any]]
    example: dict[str, Any]


POLICY_KINDS: dict[str, PolicyKind] = {}


def policy_kind_register(kind: PolicyKind) -> PolicyKind:
    """Add ``kind`` to the registry (a later registration of the same name replaces it)."""
    POLICY_KINDS[kind.name] = kind
    return kind


for _spec in policy_kind_specs():
    policy_kind_register(
        PolicyKind(
            name=_spec.name,
            description=f"{_spec.summary} ({_spec.reader})",
            validate=_validate_with(_spec.config),
            example=dict(_spec.example),
        )
    )


def policy_validate(*, kind: str, config: Any) -> dict[str, Any]:
    """The cleaned config of a ``kind`` policy (defaults filled in).

    Raises ``django.core.exceptions.ValidationError`` whose ``message_dict`` is keyed by field:
    ``kind`` for an unknown kind, else ``config`` or a path inside it (``config.tables[0]``,
    ``config.tools.lookup.patterns.id``), listing every problem found, not just the first.
    A config nested deeper than ``MAX_JSON_DEPTH`` or holding what no database stores (a NUL,
    an unpaired surrogate) is refused under ``config`` before any validator walks it.
    """
    unstorable = value_problem(config)
    if unstorable:
        raise ValidationError({"config": [ValidationError(f"Cannot be stored: {unstorable}.")]})
    policy_kind = POLICY_KINDS.get(kind)
    if policy_kind is None:
        known = ", ".join(sorted(POLICY_KINDS))
        raise ValidationError(
            {"kind": [ValidationError(f"Unknown policy kind {kind!r}. Known kinds: {known}.")]}
        )
    problems = PolicyProblems()
    cleaned = policy_kind.validate(config, problems)
    problems.raise_if_any()
    return cleaned
