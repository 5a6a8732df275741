"""Run a demo agent on the offline model through ``InMemoryRunner``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from google.genai import types

from runtime import BaseAgent, Event, InMemoryRunner


@dataclass
class Turn:
    events: list[Event] = field(default_factory=list)

    @property
    def answer(self) -> str:
        finals = [e for e in self.events if e.is_final_response() and e.content]
        return "".join(p.text or "" for p in finals[-1].content.parts or []) if finals else ""

    @property
    def calls(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(author, tool, args) of every function call."""
        return [
            (e.author, p.function_call.name or "", dict(p.function_call.args or {}))
            for e in self.events
            for p in (e.content.parts if e.content else None) or []
            if p.function_call
        ]

    @property
    def results(self) -> list[dict[str, Any]]:
        return [
            dict(p.function_response.response or {})
            for e in self.events
            for p in (e.content.parts if e.content else None) or []
            if p.function_response
        ]


class Chat:
    """One session with ``agent``; ``send`` runs one user message and returns its events."""

    def __init__(self, agent: BaseAgent, user_id: str = "u1") -> None:
        self.runner = InMemoryRunner(agent, app_name=agent.name)
        self.user_id = user_id
        self.new_session()

    def new_session(self) -> None:
        """Go on in a fresh session of the same user (``user:`` state carries over)."""
        self.session = self.runner.session_service.create_session(
            app_name=self.runner.app_name, user_id=self.user_id
        )

    def send(self, text: str) -> Turn:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        events = self.runner.run(
            user_id=self.user_id, session_id=self.session.id, new_message=message
        )
        return Turn(list(events))

    @property
    def state(self) -> dict[str, Any]:
        session = self.runner.session_service.get_session(
            app_name=self.runner.app_name, user_id=self.user_id, session_id=self.session.id
        )
        assert session is not None
        return dict(session.state)


@pytest.fixture
def chat() -> Callable[..., Chat]:
    return Chat
