"""Two sessions or runs side by side: ?a=<id>&b=<id>[&a_run=<run>&b_run=<run>]."""

from django.urls import path

from agentdash.dashboard.compare import views

urlpatterns = [
    path("compare/", views.compare, name="compare"),
]
