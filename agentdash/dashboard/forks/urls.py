"""Fork from an event, replay a fork (docs/PROTOCOL.md, "Forks and replays")."""

from django.urls import path

from agentdash.dashboard.forks import views

urlpatterns = [
    path(
        "sessions/<session_id:session_id>/fork/",
        views.session_fork_view,
        name="session_fork",
    ),
    path(
        "sessions/<session_id:session_id>/replay/",
        views.session_replay_view,
        name="session_replay",
    ),
]
