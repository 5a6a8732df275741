from django.urls import path

from agentdash.agent_sessions import ids  # noqa: F401  (registers the session_id converter)
from agentdash.dashboard import views

app_name = "dashboard"

urlpatterns = [
    path("", views.home, name="home"),
    path("sessions/", views.session_new, name="session_new"),
    path("sessions/<session_id:session_id>/", views.session_detail, name="session"),
]
