"""A person's API tokens (docs/SCORES.md, "Scripts")."""

from django.urls import path

from agentdash.dashboard.tokens import views

urlpatterns = [path("tokens/", views.tokens, name="tokens")]
