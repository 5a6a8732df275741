"""The session page and its data over HTTP (docs/PROTOCOL.md, "Pages over HTTP")."""

from django.urls import path

from agentdash.dashboard.session import data_views, views

urlpatterns = [
    path("sessions/<session_id:session_id>/", views.session_detail, name="session"),
    path("sessions/<session_id:session_id>/rename/", views.session_rename, name="session_rename"),
    path("sessions/<session_id:session_id>/delete/", views.session_delete, name="session_delete"),
    path(
        "sessions/<session_id:session_id>/snapshot/",
        data_views.session_snapshot,
        name="session_snapshot",
    ),
    path("sessions/<session_id:session_id>/spans/", data_views.session_spans, name="session_spans"),
    path(
        "sessions/<session_id:session_id>/spans/plan/",
        data_views.session_spans_plan,
        name="session_spans_plan",
    ),
    path(
        "sessions/<session_id:session_id>/spans/search/",
        data_views.session_span_search,
        name="session_span_search",
    ),
    path(
        "sessions/<session_id:session_id>/spans/<str:trace_id>/<str:span_id>/",
        data_views.session_span,
        name="session_span",
    ),
    path(
        "sessions/<session_id:session_id>/events/",
        data_views.session_events,
        name="session_events",
    ),
]
