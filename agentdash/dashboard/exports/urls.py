"""Downloads (docs/EXPORT.md): the session document, its spans as OTLP, one trace."""

from django.urls import path

from agentdash.dashboard.exports import views

urlpatterns = [
    path(
        "sessions/<session_id:session_id>/export/session/",
        views.session_export,
        name="session_export",
    ),
    path(
        "sessions/<session_id:session_id>/export/otlp/",
        views.session_export_otlp,
        name="session_export_otlp",
    ),
    path(
        "sessions/<session_id:session_id>/export/otlp/<str:trace_id>/",
        views.session_export_trace,
        name="session_export_trace",
    ),
]
