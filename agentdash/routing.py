"""Websocket routes (the HTTP ones are in ``urls``)."""

from __future__ import annotations

from django.urls import path

from agentdash.live.consumers import SessionConsumer

websocket_urlpatterns = [
    path("ws/sessions/<str:session_id>/", SessionConsumer.as_asgi(), name="session-live"),
]
