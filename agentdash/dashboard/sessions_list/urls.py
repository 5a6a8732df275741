"""The sessions list: the home page and its rows read again."""

from django.urls import path

from agentdash.dashboard.sessions_list import data_views, views

urlpatterns = [
    path("", views.home, name="home"),
    path("session-rows/", data_views.session_rows, name="session_rows"),  # the list, kept current
]
