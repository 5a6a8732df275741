"""Agents' instructions, versioned and edited while they run (docs/INSTRUCTIONS.md)."""

from django.urls import path

from agentdash.dashboard.instructions import views

urlpatterns = [
    path("instructions/", views.instructions, name="instructions"),
    path("instructions/<str:agent_name>/", views.instruction_edit, name="instruction_edit"),
]
