"""The live protocol's messages (docs/PROTOCOL.md): client frames read and validated into
typed requests (each type's parser here, the table of types in the socket action registry,
:mod:`agentdash.live.actions`), server messages built in one place.

No parser lets a malformed frame through or raises anything but :class:`ProtocolError`, whose
``code`` is one of ``ERROR_CODES``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from agentdash.controls.models import CallbackSetting
from agentdash.core.hygiene import (
    MAX_JSON_DEPTH,
    JsonTooDeep,
    json_loads_strict,
    text_problem,
    text_storable,
    value_problem,
)
from agentdash.core.problems import HTTP_STATUS, Problem
from agentdash.runs.confirmations import DECISIONS

MAX_FRAME_BYTES = 64 * 1024
MAX_TEXT_CHARS = 20_000
MAX_ID_CHARS = 128
MAX_REASON_CHARS = 2_000
# Names are stored as they come: the protocol takes no more than their columns hold.
MAX_AGENT_CHARS = CallbackSetting._meta.get_field("agent_name").max_length or 128
MAX_CALLBACK_CHARS = CallbackSetting._meta.get_field("callback_name").max_length or 255

ERROR_CODES = frozenset(HTTP_STATUS)
"""The ``error`` message's codes: the same refusals HTTP says with statuses
(:mod:`agentdash.core.problems`)."""


class ProtocolError(Exception):
    """A request that cannot be served; sent to the client as an ``error`` message."""

    def __init__(self, code: str, message: str, *, ref: str | None = None, **extra: Any) -> None:
        assert code in ERROR_CODES, code
        super().__init__(message)
        self.code = code
        self.message = message
        self.ref = ref
        self.extra = extra

    @classmethod
    def of(cls, problem: Problem, *, ref: str, **extra: Any) -> ProtocolError:
        """A service's refusal (:func:`agentdash.core.problems.problem_of`) as an error."""
        if problem.field:
            extra.setdefault("field", problem.field)
        return cls(problem.code, problem.message, ref=ref, **extra)

    def as_message(self) -> dict[str, Any]:
        return error_message(self.code, self.message, ref=self.ref, **self.extra)


@dataclass(frozen=True)
class Hello:
    type: ClassVar[str] = "hello"
    after_seq: int


@dataclass(frozen=True)
class ChatSend:
    type: ClassVar[str] = "chat.send"
    text: str
    client_id: str | None = None


@dataclass(frozen=True)
class RunCancel:
    type: ClassVar[str] = "run.cancel"
    run_id: int
    reason: str = ""


@dataclass(frozen=True)
class CallbackToggle:
    type: ClassVar[str] = "callback.toggle"
    agent: str
    callback: str
    enabled: bool
    scope: Literal["session", "global"]
    reason: str = ""


@dataclass(frozen=True)
class StateEdit:
    type: ClassVar[str] = "state.edit"
    delta: dict[str, Any]
    expected_version: int
    reason: str


@dataclass(frozen=True)
class ConfirmationAnswer:
    type: ClassVar[str] = "confirmation.answer"
    request_id: str
    decision: str
    payload: Any = None
    has_payload: bool = False
    reason: str = ""


@dataclass(frozen=True)
class Ping:
    type: ClassVar[str] = "ping"


ClientMessage = (
    Hello | ChatSend | RunCancel | CallbackToggle | StateEdit | ConfirmationAnswer | Ping
)


def read_frame(frame: str | bytes | None) -> Fields:
    """One client frame as a message's fields, its ``type`` read; the type's own parser (the
    socket action registry, :mod:`agentdash.live.actions`) reads the rest. Raises
    :class:`ProtocolError`: ``too_large`` past ``MAX_FRAME_BYTES``, ``bad_json`` for binary
    frames, invalid JSON (NaN and Infinity included), JSON nested deeper than
    ``MAX_JSON_DEPTH`` (refused before it is parsed) or a non-object, ``bad_request`` without
    a ``type``."""
    if not isinstance(frame, str):
        raise ProtocolError("bad_json", "frames must be JSON text, not binary")
    size = len(frame.encode("utf-8", "surrogatepass"))
    if len(frame) > MAX_FRAME_BYTES or size > MAX_FRAME_BYTES:
        raise ProtocolError("too_large", f"frames are limited to {MAX_FRAME_BYTES} bytes")
    try:
        data = json_loads_strict(frame)
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
    return Fields(kind, data)


def request_ref(fields: Fields) -> str | None:
    """The frame's ``req``: an id the client chose for this request (≤ 128 characters), sent
    back as ``req`` on the answer to it — ``ack``, ``chat.accepted``, ``pong`` or ``error`` —
    so a client matches answers to requests by id, never by order. Read before the rest, so
    that a request refused for its other fields is answered with its id too."""
    return fields.optional_text("req", limit=MAX_ID_CHARS)


def unknown_type(kind: str) -> ProtocolError:
    shown = text_storable(kind[:64])[0]
    return ProtocolError("unknown_type", f"unknown message type {shown!r}", ref=shown)


class Fields:
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


def parse_hello(f: Fields) -> Hello:
    return Hello(after_seq=f.integer("after_seq"))


def parse_chat_send(f: Fields) -> ChatSend:
    return ChatSend(
        text=f.text("text", limit=MAX_TEXT_CHARS),
        client_id=f.optional_text("client_id", limit=MAX_ID_CHARS),
    )


def parse_run_cancel(f: Fields) -> RunCancel:
    return RunCancel(
        run_id=f.integer("run_id", minimum=1),
        reason=f.text("reason", limit=MAX_REASON_CHARS, required=False),
    )


def parse_callback_toggle(f: Fields) -> CallbackToggle:
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


def parse_state_edit(f: Fields) -> StateEdit:
    return StateEdit(
        delta=f.mapping("delta"),
        expected_version=f.integer("expected_version"),
        reason=f.text("reason", limit=MAX_REASON_CHARS),
    )


def parse_confirmation_answer(f: Fields) -> ConfirmationAnswer:
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


def parse_ping(f: Fields) -> Ping:
    return Ping()


# ── Server → client ──────────────────────────────────────────────────────────────────────────
SERVER_MESSAGE_TYPES = frozenset(
    {
        "changes",
        "replay.done",
        "partial",
        "spans",
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
