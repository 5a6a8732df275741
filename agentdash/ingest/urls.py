from django.urls import path

from agentdash.ingest import views

urlpatterns = [
    path("v1/traces", views.traces, name="otlp_traces"),
    path("v1/logs", views.logs, name="otlp_logs"),
    # Where Langfuse's OpenTelemetry endpoint is: clients set up for it need only the host.
    path("api/public/otel/v1/traces", views.traces, name="otlp_traces_langfuse"),
]
