"""New chat: the agent picker and the first message."""

from django.urls import path

from agentdash.dashboard.chat import views

urlpatterns = [
    path("chat/", views.chat_new, name="chat_new"),  # New chat: ?agent=<name>
    path("sessions/", views.session_new, name="session_new"),  # a chat's first message
]
