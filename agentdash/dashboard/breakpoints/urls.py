"""A session's breakpoints (docs/RUNTIME.md)."""

from django.urls import path

from agentdash.dashboard.breakpoints import views

urlpatterns = [
    path(
        "sessions/<session_id:session_id>/breakpoints/",
        views.session_breakpoints,
        name="session_breakpoints",
    ),
]
