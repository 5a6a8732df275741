"""Websocket routes (the HTTP ones are in ``urls``)."""

from __future__ import annotations

from django.urls import path, re_path

from agentdash.agent_sessions import ids  # noqa: F401  (registers the session_id converter)
from agentdash.live.consumers import NoSuchSocket, SessionConsumer
from agentdash.live.list_consumer import SessionsListConsumer

# Session ids travel as the pages write them (agent_sessions.ids: any stored id, one segment);
# the last route answers what matches nothing. The ignores: the typed path() takes views,
# not the ASGI apps Channels routes with it (as Channels' docs do).
websocket_urlpatterns = [
    path("ws/sessions/", SessionsListConsumer.as_asgi(), name="sessions-live"),  # type: ignore[arg-type]
    path(
        "ws/sessions/<session_id:session_id>/",
        SessionConsumer.as_asgi(),  # type: ignore[arg-type]
        name="session-live",
    ),
    re_path(r"", NoSuchSocket.as_asgi(), name="no-such-socket"),  # type: ignore[arg-type]
]
