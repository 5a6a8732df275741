"""The playground: a model call sent again, edited (docs/PLAYGROUND.md)."""

from django.urls import path

from agentdash.dashboard.playground import views

urlpatterns = [
    path(
        "sessions/<session_id:session_id>/playground/<str:trace_id>/<str:span_id>/",
        views.playground,
        name="playground",
    ),
]
