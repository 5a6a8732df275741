"""Which processes of agents that run elsewhere are connected, and since when (read-only:
they register themselves)."""

from __future__ import annotations

from django.contrib import admin

from agentdash.core.admin_base import ReadOnlyModelAdmin
from agentdash.remote.models import RemotePause, RemoteProcess
from agentdash.remote.selectors import is_connected


@admin.register(RemoteProcess)
class RemoteProcessAdmin(ReadOnlyModelAdmin):
    list_display = ("root_agent", "host", "pid", "project", "connected", "connected_at",
                    "last_seen")  # fmt: skip
    list_select_related = ("key",)
    search_fields = ("root_agent", "host", "token")
    ordering = ("-last_seen",)
    exclude = ("token",)

    @admin.display(description="Project")
    def project(self, obj: RemoteProcess) -> str:
        return obj.key.project

    @admin.display(boolean=True, description="Connected")
    def connected(self, obj: RemoteProcess) -> bool:
        return is_connected(obj)


@admin.register(RemotePause)
class RemotePauseAdmin(ReadOnlyModelAdmin):
    """Steps of remote apps that paused for a person: answered on the session's page (where
    the answer is checked and audited), listed here with what became of them."""

    list_display = ("asked_at", "kind", "tool", "agent", "app_session", "status", "answered_by",
                    "answered_at")  # fmt: skip
    list_filter = ("status", "kind")
    list_select_related = ("answered_by",)
    search_fields = ("tool", "agent", "app_session", "request_id")
    ordering = ("-asked_at",)
