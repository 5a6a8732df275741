from django.urls import path

from agentdash.dashboard import views

app_name = "dashboard"

urlpatterns = [
    path("", views.home, name="home"),
]
