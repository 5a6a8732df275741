"""Annotation queues: runs for people to review, one by one (docs/SCORES.md)."""

from django.urls import path

from agentdash.dashboard.queues import views

urlpatterns = [
    path("queues/", views.queues, name="queues"),
    path("queues/<slug:name>/", views.queue_page, name="queue"),
    path("queues/<slug:name>/review/", views.queue_review, name="queue_review"),
]
