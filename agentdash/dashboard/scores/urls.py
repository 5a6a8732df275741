"""Scores over HTTP: a session's, given and taken back (docs/SCORES.md)."""

from django.urls import path

from agentdash.dashboard.scores import evaluations, views

urlpatterns = [
    path("evaluations/", evaluations.evaluations, name="evaluations"),
    path(
        "sessions/<session_id:session_id>/scores/",
        views.session_scores_view,
        name="session_scores",
    ),
    path(
        "sessions/<session_id:session_id>/scores/<int:score_id>/delete/",
        views.score_delete_view,
        name="score_delete",
    ),
]
