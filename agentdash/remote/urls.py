from django.urls import path

from agentdash.remote import views

urlpatterns = [
    path("v1/agentdash/processes", views.processes, name="remote_processes"),
    path("v1/agentdash/processes/<str:token>/controls", views.controls, name="remote_controls"),
]
