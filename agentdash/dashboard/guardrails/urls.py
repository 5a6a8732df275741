"""What the guardrails decided, and the policies they follow (docs/SAFETY.md)."""

from django.urls import path

from agentdash.dashboard.guardrails import views

urlpatterns = [
    path(
        "sessions/<session_id:session_id>/guardrails/",
        views.session_guardrails,
        name="session_guardrails",
    ),
    path(
        "agents/<str:agent_name>/guardrails/",
        views.agent_guardrails,
        name="agent_guardrails",
    ),
    path("policies/<int:policy_id>/", views.policy_edit, name="policy_edit"),
]
