from django.urls import path

from agentdash.monitor import views

urlpatterns = [
    path("metrics", views.metrics, name="metrics"),
    path("monitor/stats.json", views.stats_json, name="monitor_stats"),
    path("monitor/", views.monitor_page, name="monitor"),
]
