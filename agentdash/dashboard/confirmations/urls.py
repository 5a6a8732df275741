"""Tool confirmations: what a session waits on, a person's answer, the runs waiting
(docs/RUNTIME.md)."""

from django.urls import path

from agentdash.dashboard.confirmations import views

urlpatterns = [
    path(
        "sessions/<session_id:session_id>/confirmations/",
        views.session_confirmations,
        name="session_confirmations",
    ),
    path(
        "sessions/<session_id:session_id>/confirmations/<str:request_id>/",
        views.confirmation_answer_view,
        name="confirmation_answer",
    ),
    path("waiting/", views.waiting_runs, name="waiting_runs"),  # operators
]
