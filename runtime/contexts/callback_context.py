"""What agent and model callbacks get: state that records its changes, and artifacts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from google.genai import types

from runtime.contexts.readonly_context import ReadonlyContext
from runtime.events.event_actions import EventActions
from runtime.sessions.state import State

if TYPE_CHECKING:
    from runtime.artifacts import BaseArtifactService
    from runtime.contexts.invocation_context import InvocationContext


class CallbackContext(ReadonlyContext):
    """``state`` writes are visible at once and become the owning event's ``state_delta``;
    ``save_artifact`` records the saved version in its ``artifact_delta``."""

    __slots__ = ("_event_actions", "_state")

    def __init__(
        self, invocation_context: InvocationContext, event_actions: EventActions | None = None
    ) -> None:
        super().__init__(invocation_context)
        self._event_actions = event_actions or EventActions()
        self._state = State(invocation_context.session.state, self._event_actions.state_delta)

    @property
    def state(self) -> State:  # type: ignore[override]
        return self._state

    @property
    def actions(self) -> EventActions:
        return self._event_actions

    def end_invocation(self) -> None:
        """Stop the invocation after the current step."""
        self._invocation_context.end_invocation = True

    def _artifacts(self) -> BaseArtifactService:
        service = self._invocation_context.artifact_service
        if service is None:
            raise ValueError("no artifact service: pass artifact_service= to the Runner")
        return service

    async def save_artifact(self, filename: str, artifact: types.Part) -> int:
        """Save a new version of ``filename`` and return its number (0 for the first)."""
        ictx = self._invocation_context
        version: int = await self._artifacts().save_artifact(
            app_name=ictx.app_name,
            user_id=ictx.user_id,
            session_id=ictx.session.id,
            filename=filename,
            artifact=artifact,
        )
        self._event_actions.artifact_delta[filename] = version
        return version

    async def load_artifact(self, filename: str, version: int | None = None) -> types.Part | None:
        """The artifact's given (default: latest) version, or ``None`` when there is none."""
        ictx = self._invocation_context
        part: types.Part | None = await self._artifacts().load_artifact(
            app_name=ictx.app_name,
            user_id=ictx.user_id,
            session_id=ictx.session.id,
            filename=filename,
            version=version,
        )
        return part

    async def list_artifacts(self) -> list[str]:
        """File names of the session's (and the user's ``user:``) artifacts."""
        ictx = self._invocation_context
        keys: list[str] = await self._artifacts().list_artifact_keys(
            app_name=ictx.app_name, user_id=ictx.user_id, session_id=ictx.session.id
        )
        return keys
