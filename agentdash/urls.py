from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from agentdash.core.views import permission_denied, theme_set
from agentdash.runs.views import health

admin.site.site_header = "AgentDash administration"
admin.site.site_title = "AgentDash admin"

handler403 = permission_denied  # templates/403.html, or JSON for a client that asks for it

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("theme/", theme_set, name="theme"),  # the theme toggle without a script
    path("health/", health, name="health"),  # load balancers and operators (runs/views.py)
    path("", include("agentdash.ingest.urls")),  # OTLP/HTTP from agents elsewhere
    path("", include("agentdash.remote.urls")),  # their processes take controls
    path("", include("agentdash.monitor.urls")),  # /metrics for Prometheus
    path("", include("agentdash.dashboard.urls")),
]
