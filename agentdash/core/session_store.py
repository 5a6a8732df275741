"""The session engine (``SESSION_ENGINE``): Django's database sessions, with one guard.

A cookie can carry anything. A session key that no session can have — a NUL character or an
unpaired surrogate, which PostgreSQL refuses in a query (``DataError``) — is taken as no key
at all: the request goes on signed out. The HTTP side drops such cookies before anything
reads them (``core.middleware``); the websocket stack (Channels' ``AuthMiddleware``) reads the
session through this engine too, before any consumer runs, so the guard lives here, once for
both.
"""

from __future__ import annotations

from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore

from agentdash.core.hygiene import text_problem


class SessionStore(DatabaseSessionStore):
    def _validate_session_key(self, key: str | None) -> bool:
        valid = super()._validate_session_key(key)  # type: ignore[misc]  # not typed
        return bool(valid) and text_problem(str(key)) is None
