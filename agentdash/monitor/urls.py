from django.urls import path

from agentdash.monitor import alert_views, views

urlpatterns = [
    path("metrics", views.metrics, name="metrics"),
    path("monitor/stats.json", views.stats_json, name="monitor_stats"),
    path("monitor/", views.monitor_page, name="monitor"),
    path("monitor/alerts/", alert_views.alerts_page, name="monitor_alerts"),
    path("monitor/alerts.json", alert_views.alerts_json, name="monitor_alerts_json"),
    path("monitor/alerts/<str:rule_id>/", alert_views.alert_rule_change,
         name="monitor_alert_change"),
    path("monitor/alerts/<str:rule_id>/delete", alert_views.alert_rule_delete,
         name="monitor_alert_delete"),
    path("monitor/alerts/<str:rule_id>/check", alert_views.alert_rule_check,
         name="monitor_alert_check"),
    path("monitor/alert-events/<str:event_id>/retry", alert_views.alert_delivery_retry,
         name="monitor_alert_retry"),
]  # fmt: skip
