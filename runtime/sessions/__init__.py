from runtime.sessions.base_session_service import (
    BaseSessionService,
    GetSessionConfig,
    ListSessionsResponse,
    SessionExistsError,
    SessionNotFoundError,
)
from runtime.sessions.in_memory_session_service import InMemorySessionService
from runtime.sessions.session import Session
from runtime.sessions.state import State

__all__ = [
    "BaseSessionService",
    "GetSessionConfig",
    "InMemorySessionService",
    "ListSessionsResponse",
    "Session",
    "SessionExistsError",
    "SessionNotFoundError",
    "State",
]
