from django.apps import AppConfig


class RemoteConfig(AppConfig):
    name = "agentdash.remote"
    label = "remote"
    verbose_name = "Remote agents"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from agentdash.changes.items import item_kind_register
        from agentdash.changes.models import SessionChange
        from agentdash.remote.pauses import pauses_load

        item_kind_register(SessionChange.Kind.PAUSE, load=pauses_load)
