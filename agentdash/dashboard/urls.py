from django.urls import path

from agentdash.dashboard import views

app_name = "dashboard"

urlpatterns = [
    path("", views.home, name="home"),
    path("sessions/", views.session_new, name="session_new"),
    path("sessions/<str:session_id>/", views.session_detail, name="session"),
]
