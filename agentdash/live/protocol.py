"""The live protocol's messages (docs/PROTOCOL.md): client frames parsed and validated into
typed requests, server messages built in one place.

``parse_client_message`` never lets a malformed frame through and never raises anything but
:class:`ProtocolError`, whose ``code`` is one of ``ERROR_CODES``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from agentdash.controls.models import CallbackSetting
from agentdash.core.hygiene import (
    MAX_JSON_DEPTH,
    JsonTooDeep,
    json_loads_bounded,
    text_problem,
    text_storable,
    value_problem,
)
from agentdash.runs.confirmations import DECISIONS

MAX_FRAME_BYTES = 64 * 1024
MAX_TEXT_CHARS = 20_000
MAX_ID_CHARS = 128
MAX_REASON_CHARS = 2_000
# Names are stored as they come: the protocol takes no more than their columns hold.
MAX_AGENT_CHARS = CallbackSetting._meta.get_field("agent_name").max_length or 128
MAX_CALLBACK_CHARS = CallbackSetting._meta.get_field("callback_name").max_length or 255

ERROR_CODES = frozenset(
    {
        "bad_json",
        "too_large",
        "bad_request",
        "unknown_type",
        "forbidden",
        "not_found",
        "conflict",
        "rate_limited",
        "unavailable",
        "internal",
    }
)


class ProtocolError(Exception):
    """A request that cannot be served; sent to the client as an ``error`` message."""

    def __init__(self, code: str, message: str, *, ref: str | None = None, **extra: Any) -> None:
        assert code in ERROR_CODES, code
        super().__init__(message)
        self.code = code
        self.message = message
        self.ref = ref
        self.extra = extra

    def as_message(self) -> dict[str, Any]:
        return error_message(self.code, self.message, ref=self.ref, **self.extra)


@dataclass(frozen=True)
class Hello:
    after_seq: int


@dataclass(frozen=True)
class ChatSend:
    text: str
    client_id: str | None = None


@dataclass(frozen=True)
class RunCancel:
    run_id: int
    reason: str = ""


@dataclass(frozen=True)
class CallbackToggle:
    agent: str
    callback: str
    enabled: bool
    scope: Literal["session", "global"]
    reason: str = ""


@dataclass(frozen=True)
class StateEdit:
    delta: dict[str, Any]
    expected_version: int
    reason: str


@dataclass(frozen=True)
class ConfirmationAnswer:
    request_id: str
    decision: str
    payload: Any = None
    has_payload: bool = False
    reason: str = ""


@dataclass(frozen=True)
class Ping:
    pass


ClientMessage = (
    Hello | ChatSend | RunCancel | CallbackToggle | StateEdit | ConfirmationAnswer | Ping
)


def parse_client_message(frame: str | bytes | None) -> ClientMessage:
    """One client frame as a request. Raises :class:`ProtocolError`: ``too_large`` past
    ``MAX_FRAME_BYTES``, ``bad_json`` for binary frames, invalid JSON (NaN and Infinity
    included), JSON nested deeper than ``MAX_JSON_DEPTH`` (refused before it is parsed) or a
    non-object, ``unknown_type``, or ``bad_request`` for a missing or invalid field — a
    string with a NUL character or an unpaired surrogate is invalid, in keys too (``ref`` is
    then the request's type)."""
    if not isinstance(frame, str):
        raise ProtocolError("bad_json", "frames must be JSON text, not binary")
    size = len(frame.encode("utf-8", "surrogatepass"))
    if len(frame) > MAX_FRAME_BYTES or size > MAX_FRAME_BYTES:
        raise ProtocolError("too_large", f"frames are limited to {MAX_FRAME_BYTES} bytes")
    try:
        data = json_loads_bounded(frame, parse_constant=_no_constants)
    except JsonTooDeep:
        raise ProtocolError(
            "bad_json", f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
        ) from None
    except (ValueError, RecursionError) as exc:
        raise ProtocolError("bad_json", f"not valid JSON: {type(exc).__name__}") from None
    if not isinstance(data, dict):
        raise ProtocolError("bad_json", "a message is a JSON object with a 'type'")
    kind = data.get("type")
    if not isinstance(kind, str) or not kind:
        raise ProtocolError("bad_request", "the message has no 'type'")
    parser = _PARSERS.get(kind)
    if parser is None:
        shown = text_storable(kind[:64])[0]
        raise ProtocolError("unknown_type", f"unknown message type {shown!r}", ref=shown)
    return parser(_Fields(kind, data))


class _Fields:
    """Typed reads of one message's fields; each failure is a ``bad_request``."""

    def __init__(self, kind: str, data: dict[str, Any]) -> None:
        self.kind, self.data = kind, data

    def fail(self, message: str) -> ProtocolError:
        return ProtocolError("bad_request", message, ref=self.kind)

    def integer(self, name: str, *, minimum: int = 0) -> int:
        value = self.data.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(f"'{name}' must be an integer ≥ {minimum}")
        return value

    def text(self, name: str, *, limit: int, required: bool = True) -> str:
        value = self.data.get(name, None if required else "")
        if not isinstance(value, str) or (required and not value.strip()):
            raise self.fail(f"'{name}' must be a non-empty string")
        if len(value) > limit:
            raise self.fail(f"'{name}' is longer than {limit} characters")
        problem = text_problem(value)
        if problem:
            raise self.fail(f"'{name}' {problem}")
        return value

    def optional_text(self, name: str, *, limit: int) -> str | None:
        return None if self.data.get(name) is None else self.text(name, limit=limit)

    def flag(self, name: str) -> bool:
        value = self.data.get(name)
        if not isinstance(value, bool):
            raise self.fail(f"'{name}' must be true or false")
        return value

    def mapping(self, name: str) -> dict[str, Any]:
        value = self.data.get(name)
        if not isinstance(value, dict) or not value:
            raise self.fail(f"'{name}' must be a non-empty object")
        problem = value_problem(value)
        if problem:
            raise self.fail(f"'{name}': {problem}")
        return value


def _hello(f: _Fields) -> Hello:
    return Hello(after_seq=f.integer("after_seq"))


def _chat_send(f: _Fields) -> ChatSend:
    return ChatSend(
        text=f.text("text", limit=MAX_TEXT_CHARS),
        client_id=f.optional_text("client_id", limit=MAX_ID_CHARS),
    )


def _run_cancel(f: _Fields) -> RunCancel:
    return RunCancel(
        run_id=f.integer("run_id", minimum=1),
        reason=f.text("reason", limit=MAX_REASON_CHARS, required=False),
    )


def _callback_toggle(f: _Fields) -> CallbackToggle:
    scope = f.data.get("scope")
    if scope not in ("session", "global"):
        raise f.fail('\'scope\' must be "session" or "global"')
    return CallbackToggle(
        agent=f.text("agent", limit=MAX_AGENT_CHARS),
        callback=f.text("callback", limit=MAX_CALLBACK_CHARS),
        enabled=f.flag("enabled"),
        scope=scope,
        reason=f.text("reason", limit=MAX_REASON_CHARS, required=False),
    )


def _state_edit(f: _Fields) -> StateEdit:
    return StateEdit(
        delta=f.mapping("delta"),
        expected_version=f.integer("expected_version"),
        reason=f.text("reason", limit=MAX_REASON_CHARS),
    )


def _confirmation_answer(f: _Fields) -> ConfirmationAnswer:
    decision = f.data.get("decision")
    if not isinstance(decision, str) or decision not in DECISIONS:
        raise f.fail(f"'decision' must be one of {', '.join(sorted(DECISIONS))}")
    has_payload = "payload" in f.data
    payload = f.data.get("payload")
    problem = value_problem(payload) if has_payload else None
    if problem:
        raise f.fail(f"'payload': {problem}")
    return ConfirmationAnswer(
        request_id=f.text("request_id", limit=MAX_ID_CHARS),
        decision=decision,
        payload=payload,
        has_payload=has_payload,
        reason=f.text("reason", limit=MAX_REASON_CHARS, required=False),
    )


_PARSERS: dict[str, Callable[[_Fields], ClientMessage]] = {
    "hello": _hello,
    "chat.send": _chat_send,
    "run.cancel": _run_cancel,
    "callback.toggle": _callback_toggle,
    "state.edit": _state_edit,
    "confirmation.answer": _confirmation_answer,
    "ping": lambda f: Ping(),
}
CLIENT_MESSAGE_TYPES = frozenset(_PARSERS)


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# ── Server → client ──────────────────────────────────────────────────────────────────────────
SERVER_MESSAGE_TYPES = frozenset(
    {
        "changes",
        "replay.done",
        "partial",
        "chat.accepted",
        "ack",
        "error",
        "pong",
        "callback.changed",
    }
)


def changes_message(items: list[dict[str, Any]], *, replay: bool) -> dict[str, Any]:
    return {"type": "changes", "items": items, "replay": replay}


def replay_done_message(seq: int) -> dict[str, Any]:
    return {"type": "replay.done", "seq": seq}


def partial_message(
    *, run_id: int | None, invocation_id: str, author: str, text: str
) -> dict[str, Any]:
    return {
        "type": "partial",
        "run_id": run_id,
        "invocation_id": invocation_id,
        "author": author,
        "text": text,
    }


def chat_accepted_message(
    *, run_id: int, invocation_id: str, client_id: str | None
) -> dict[str, Any]:
    return {
        "type": "chat.accepted",
        "run_id": run_id,
        "invocation_id": invocation_id,
        "client_id": client_id,
    }


def ack_message(ref: str, **result: Any) -> dict[str, Any]:
    return {"type": "ack", "ref": ref, **result}


def error_message(code: str, message: str, *, ref: str | None = None, **extra: Any) -> dict:
    found = {"type": "error", "code": code, "message": message, **extra}
    if ref is not None:
        found["ref"] = ref
    return found


def unavailable_error(what: str = "the database") -> dict[str, Any]:
    """The ``error`` for a request that found ``what`` unreachable: nothing changed."""
    return error_message(
        "unavailable", f"{what} is unavailable: nothing was changed; try again shortly"
    )


def callback_changed_message(
    *, agent_name: str, callback_name: str, session_id: str | None, enabled: bool | None
) -> dict[str, Any]:
    """A callback switch changed (by anyone, anywhere): ``session_id`` None is the global
    switch, ``enabled`` None a switch cleared (the default applies again)."""
    return {
        "type": "callback.changed",
        "setting": {
            "agent_name": agent_name,
            "callback_name": callback_name,
            "session_id": session_id,
            "enabled": enabled,
        },
    }


def pong_message() -> dict[str, Any]:
    return {"type": "pong"}
