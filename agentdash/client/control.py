"""The controls an app's process takes from AgentDash: it registers what it runs, then asks,
about once a second from a thread of its own, which callback switches apply — globally and
for the sessions it has run lately — and which state edits operators made, and keeps the
answer for its callbacks and steps to read. With each question it reports the state each of
those sessions had at its last step (when it changed), so the session page shows it, and the
edits it applied.

Nothing here ever blocks or slows the agent: a callback reads the last answer (a dict
lookup); when AgentDash is away the last answer stands (all on until there is one), and the
thread tries again with backoff (1 s, doubling, at most 30 s), registering again when
AgentDash no longer knows the process (a restart of AgentDash's database, say).

Standard library only (``urllib``, ``threading``, ``json``).
"""

from __future__ import annotations

import json
import logging
import os
import platform
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections import OrderedDict
from typing import Any

from agentdash.client.pauses import Pauses

logger = logging.getLogger(__name__)

PROCESSES_PATH = "/v1/agentdash/processes"
RECENT_SESSIONS = 50
MAX_BACKOFF_S = 30.0
PAUSED_POLL_S = 0.25  # while a step waits for its answer
PAUSED_BACKOFF_S = 5.0  # the longest retry while a step waits (a person waits for it too)
TIMEOUT_S = 10.0


class Controls:
    """One process's connection: what it registered and the switches that apply.

    ``agents``: ``[{name, callbacks: [{slot, name}], tools: [name]}]`` (what
    :func:`agentdash.client.adk.describe` makes of an agent tree)."""

    def __init__(
        self, *, url: str, key: str, agents: list[dict[str, Any]], root_agent: str,
        versions: dict[str, str] | None = None, poll_s: float = 1.0,
        pauses: Pauses | None = None, confirmations: bool = True,
    ) -> None:  # fmt: skip
        self.url = url.rstrip("/")
        self.key = key
        self.agents = agents
        self.root_agent = root_agent
        self.versions = {"python": platform.python_version(), **(versions or {})}
        self.poll_s = poll_s
        self.pauses = pauses or Pauses(root_agent=root_agent)
        self.confirmations = confirmations  # ADK tool confirmations are answered here
        self.token: str | None = None
        self.connected = threading.Event()  # set after the first answer
        self._switches: dict[tuple[str, str, str | None], bool] = {}
        self._sessions: OrderedDict[str, None] = OrderedDict()
        self._states: dict[str, str] = {}  # session → its state's JSON at its last step
        self._reported: dict[str, str] = {}  # session → the JSON last reported
        self._edits: dict[str, list[dict[str, Any]]] = {}  # session → edits to apply
        self._applied: dict[str, int] = {}  # session → the last edit applied
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ── what callbacks read ────────────────────────────────────────────────────────────────
    def enabled(self, *, agent: str, callback: str, session: str | None) -> bool:
        """Whether ``callback`` of ``agent`` runs now in ``session``: the session's switch,
        else the global one, else on. Remembers ``session`` as one to ask about."""
        if session:
            self._remember(session)
        switches = self._switches  # replaced whole, never changed in place
        found = switches.get((agent, callback, session)) if session else None
        if found is None:
            found = switches.get((agent, callback, None))
        return True if found is None else found

    def step(self, *, session: str, state: dict[str, Any], apply: Any) -> int:
        """A step of ``session`` begins (the agent's, or a model call's): the operators'
        pending edits are applied, oldest first, with ``apply(key, value)``, and the state
        (``state`` after them) is kept to report. Returns how many edits were applied."""
        self._remember(session)
        with self._lock:
            pending = [
                e for e in self._edits.get(session, []) if e["id"] > self._applied.get(session, 0)
            ]
        applied = 0
        for edit in sorted(pending, key=lambda e: e["id"]):
            for key, value in edit["delta"].items():
                apply(key, value)
                state = {**state, key: value}
            applied += 1
            with self._lock:
                self._applied[session] = max(self._applied.get(session, 0), edit["id"])
        try:
            text = json.dumps(state, default=str, sort_keys=True)
        except (TypeError, ValueError):
            return applied  # a state JSON cannot carry even as text: not reported
        with self._lock:
            self._states[session] = text
        return applied

    def pause_reason(self, *, session: str, agent: str, tool: str | None) -> str | None:
        """Why the step about to start pauses (``Pauses.reason``), or ``None``."""
        self._remember(session)
        return self.pauses.reason(session=session, agent=agent, tool=tool)

    def _remember(self, session: str) -> None:
        with self._lock:
            self._sessions[session] = None
            self._sessions.move_to_end(session)
            while len(self._sessions) > RECENT_SESSIONS:
                gone, _ = self._sessions.popitem(last=False)
                for kept in (self._states, self._reported, self._edits, self._applied):
                    kept.pop(gone, None)

    # ── the thread ─────────────────────────────────────────────────────────────────────────
    def start(self) -> Controls:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name="agentdash-controls", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.pauses.wake.set()

    def _run(self) -> None:
        delay = 1.0
        while not self._stop.is_set():
            try:
                if self.token is None:
                    self._register()
                self._poll()
                delay = 1.0
                self._sleep(PAUSED_POLL_S if self.pauses.any_waiting else self.poll_s)
            except _Gone:
                self.token = None
            except Exception as exc:  # AgentDash away: keep the last answer, try again
                logger.info("AgentDash controls unreachable (%s): again in %.0f s", exc, delay)
                self._sleep(delay)
                most = PAUSED_BACKOFF_S if self.pauses.any_waiting else MAX_BACKOFF_S
                delay = min(delay * 2, most)

    def _sleep(self, seconds: float) -> None:
        """Until ``seconds`` pass, a step pauses (its question goes at once) or stop."""
        self.pauses.wake.wait(seconds)
        self.pauses.wake.clear()

    def _register(self) -> None:
        body = {
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "versions": self.versions,
            "root_agent": self.root_agent,
            "agents": self.agents,
        }
        answer = self._request("POST", PROCESSES_PATH, body)
        self.token = str(answer["process"])
        self.poll_s = float(answer.get("poll_s") or self.poll_s)

    def _poll(self) -> None:
        with self._lock:
            sessions = list(self._sessions)
            changed = {s: t for s, t in self._states.items() if self._reported.get(s) != t}
            applied = dict(self._applied)
        pauses = self.pauses.report()
        body = {
            "sessions": sessions,
            "states": {s: json.loads(t) for s, t in changed.items()},
            "applied": applied,
            **pauses,
        }
        path = f"{PROCESSES_PATH}/{urllib.parse.quote(str(self.token))}/controls"
        answer = self._request("POST", path, body)
        self._switches = {
            (str(s["agent"]), str(s["callback"]), s.get("session")): bool(s["enabled"])
            for s in answer.get("switches", [])
        }
        edits: dict[str, list[dict[str, Any]]] = {}
        for edit in answer.get("edits", []):
            if isinstance(edit.get("delta"), dict) and isinstance(edit.get("id"), int):
                edits.setdefault(str(edit["session"]), []).append(edit)
        self.pauses.reported(pauses, answer)
        waiting = set(answer.get("waiting") or ())
        with self._lock:
            self._edits = edits
            self._reported.update({s: t for s, t in changed.items() if s not in waiting})
        self.connected.set()

    def _request(self, method: str, path: str, body: Any) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path,
            data=data,
            method=method,
            headers={"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
                return json.loads(answer.read() or b"{}")
        except urllib.error.HTTPError as exc:
            if exc.code == 404 and path != PROCESSES_PATH:
                raise _Gone() from None
            raise


class _Gone(Exception):
    """AgentDash does not know the process (any more): register again."""
