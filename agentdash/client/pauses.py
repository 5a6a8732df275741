"""Pauses in an app's process: a step of its agent waits for a person's answer from the
dashboard — at a breakpoint an operator set there, or at an ADK tool confirmation.

A pause is named by the app (its kind and the tool call's id), so asking again — after
AgentDash restarted and forgot the process, or after the app restarted and resumed the same
call — finds the same pause on AgentDash's side, and its answer if one was given meanwhile.
The controls' thread names every waiting pause in each poll until its answer comes back
(polling faster while one waits); the waiting step reads that answer.

**The rule a pause waits by** is the app's (``connect(pause_timeout_s=, pause_default=)``):
with no answer within ``timeout_s`` — AgentDash unreachable all that time included — the step
goes on with the default answer (``"deny"`` unless the app says ``"approve"``), and AgentDash
is told the pause ended so. ``timeout_s`` ``None`` waits for as long as it takes.

Standard library only.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

DECISIONS = ("approve", "deny", "step", "cancel")
DEFAULTS = ("deny", "approve")
WAIT_STEP_S = 0.05


@dataclass
class Pause:
    """One step waiting: ``kind`` ``breakpoint`` or ``confirmation``."""

    id: str
    session: str
    kind: str
    agent: str = ""
    tool: str = ""
    call_id: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    hint: str = ""
    payload: Any = None
    answer: dict[str, Any] | None = None
    done: threading.Event = field(default_factory=threading.Event)

    def asked(self) -> dict[str, Any]:
        return {
            "id": self.id, "session": self.session, "kind": self.kind, "agent": self.agent,
            "tool": self.tool, "call_id": self.call_id, "args": self.args, "hint": self.hint,
            "payload": self.payload,
        }  # fmt: skip


def pause_id(kind: str, call_id: str | None) -> str:
    """A pause's name: the tool call's id when there is one (stable when the call is asked
    about again), else a fresh one (a model call has none)."""
    return f"{kind}:{call_id}" if call_id else f"{kind}:{uuid.uuid4().hex}"


class Pauses:
    """The process's waiting pauses, what to tell AgentDash of them, where to pause."""

    def __init__(
        self, *, root_agent: str = "", timeout_s: float | None = 600.0, default: str = "deny"
    ) -> None:
        if default not in DEFAULTS:
            raise ValueError(f"pause_default must be one of {DEFAULTS}")
        if timeout_s is not None and not timeout_s > 0:
            raise ValueError("pause_timeout_s must be positive, or None to wait for ever")
        self.root_agent = root_agent
        self.timeout_s = timeout_s
        self.default = default
        self.breakpoints: list[dict[str, Any]] = []  # replaced whole by each poll
        self._waiting: dict[tuple[str, str], Pause] = {}
        self._taken: list[dict[str, str]] = []
        self._ended: list[dict[str, str]] = []
        self._stepping: set[str] = set()  # sessions whose next step pauses
        self._outcomes: dict[str, list[tuple[str, str]]] = {}
        self._lock = threading.Lock()
        self.wake = threading.Event()  # set: the controls' thread polls now

    # ── where to pause ─────────────────────────────────────────────────────────────────────
    def reason(self, *, session: str, agent: str, tool: str | None) -> str | None:
        """Why the step about to start in ``session`` (a call of ``tool``; ``None``: a model
        call of ``agent``) pauses, or ``None``."""
        with self._lock:
            stepping = session in self._stepping
            self._stepping.discard(session)
            outcomes = self._outcomes.pop(session, [])
        where = f"tool {tool}" if tool is not None else f"a model call of {agent}"
        if stepping:
            return f"Step: paused before {where}"
        found = [
            b for b in self.breakpoints
            if b.get("session") in (None, session)
            and b.get("agent") in (None, agent, self.root_agent)
        ]  # fmt: skip
        wanted = {b.get("outcome") for b in found if b.get("kind") == "callback_outcome"}
        hits = [f"{name} {outcome}" for name, outcome in outcomes if outcome in wanted]
        if hits:
            return f"Breakpoint after callback {', '.join(hits)}: paused before {where}"
        for point in found:
            kind = point.get("kind")
            if tool is not None and kind == "before_tool" and point.get("tool") == tool:
                return f"Breakpoint: before tool {tool}"
            if tool is None and kind == "before_model":
                return f"Breakpoint: before {where}"
        return None

    def step_next(self, session: str) -> None:
        with self._lock:
            self._stepping.add(session)

    def outcome(self, *, session: str, callback: str, outcome: str) -> None:
        """A callback ended ``raised`` or ``overridden``: checked at the session's next step."""
        with self._lock:
            self._outcomes.setdefault(session, []).append((callback, outcome))
            del self._outcomes[session][:-20]

    # ── waiting ────────────────────────────────────────────────────────────────────────────
    async def wait(self, pause: Pause) -> dict[str, Any]:
        """Wait for ``pause``'s answer — ``{decision, payload, reason}`` — by the app's rule
        (awaiting: the app's event loop goes on meanwhile)."""
        deadline = self._asked(pause)
        while not pause.done.is_set():
            if deadline is not None and time.monotonic() >= deadline:
                return self._timed_out(pause)
            await asyncio.sleep(WAIT_STEP_S)
        assert pause.answer is not None
        return pause.answer

    def wait_here(self, pause: Pause) -> dict[str, Any]:
        """:meth:`wait`, holding the calling thread (for a framework that calls its
        callbacks synchronously)."""
        deadline = self._asked(pause)
        while not pause.done.wait(WAIT_STEP_S):
            if deadline is not None and time.monotonic() >= deadline:
                return self._timed_out(pause)
        assert pause.answer is not None
        return pause.answer

    def _asked(self, pause: Pause) -> float | None:
        """Name ``pause`` in the next poll, at once; its deadline by the app's rule."""
        with self._lock:
            self._waiting[(pause.session, pause.id)] = pause
        self.wake.set()
        return None if self.timeout_s is None else time.monotonic() + self.timeout_s

    def _timed_out(self, pause: Pause) -> dict[str, Any]:
        why = f"no answer within {self.timeout_s:g} s: {self.default} by the app's rule"
        with self._lock:
            self._waiting.pop((pause.session, pause.id), None)
            self._ended.append({"id": pause.id, "session": pause.session, "why": why})
        self.wake.set()
        payload = pause.payload if self.default == "approve" else None
        return {"decision": self.default, "payload": payload, "reason": why}

    @property
    def any_waiting(self) -> bool:
        return bool(self._waiting)

    # ── what a poll says and hears ─────────────────────────────────────────────────────────
    def report(self) -> dict[str, Any]:
        """The poll's part: the pauses waiting, the answers taken, the pauses ended."""
        with self._lock:
            return {
                "pauses": [p.asked() for p in self._waiting.values()],
                "taken": list(self._taken),
                "ended": list(self._ended),
            }

    def reported(self, sent: dict[str, Any], answer: dict[str, Any]) -> None:
        """AgentDash answered the poll that carried ``sent``: its breakpoints hold, its
        answers go to the steps that wait for them."""
        points = answer.get("breakpoints")
        points = points if isinstance(points, list) else []
        self.breakpoints = [p for p in points if isinstance(p, dict)]
        with self._lock:
            for done in ("taken", "ended"):
                kept = getattr(self, f"_{done}")
                kept[:] = [item for item in kept if item not in sent[done]]
            for given in answer.get("answers") or []:
                if not isinstance(given, dict) or given.get("decision") not in DECISIONS:
                    continue
                pause = self._waiting.pop((str(given.get("session")), str(given.get("id"))), None)
                if pause is None:
                    continue
                pause.answer = {
                    "decision": given["decision"],
                    "payload": given.get("payload"),
                    "reason": str(given.get("reason") or ""),
                }
                self._taken.append({"id": pause.id, "session": pause.session})
                pause.done.set()
